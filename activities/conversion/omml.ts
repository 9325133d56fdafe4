import { children, child, attr, textContent, parseXml, type XNode } from './xml.js';

/**
 * Office Math (OMML) → LaTeX-like text, so equations in Word documents survive conversion (mammoth
 * drops them). Covers fractions, scripts, radicals, delimiters, n-ary operators, functions, accents,
 * bars, limits, matrices and equation arrays; anything else falls back to its plain text.
 */

const NARY: Record<string, string> = {
  '∑': '\\sum', '∏': '\\prod', '∐': '\\coprod', '∫': '\\int', '∬': '\\iint', '∭': '\\iiint', '∮': '\\oint',
  '⋃': '\\bigcup', '⋂': '\\bigcap', '⋁': '\\bigvee', '⋀': '\\bigwedge',
};

const ACCENTS: Record<string, string> = {
  '\u0302': '\\hat', '\u0303': '\\tilde', '\u0307': '\\dot', '\u0308': '\\ddot', '\u0304': '\\bar', '\u20d7': '\\vec',
  '\u0301': '\\acute', '\u0300': '\\grave', '\u030c': '\\check', '\u0306': '\\breve',
};

const FUNCTIONS = new Set(['sin', 'cos', 'tan', 'cot', 'sec', 'csc', 'log', 'ln', 'exp', 'lim', 'max', 'min', 'sinh', 'cosh', 'tanh', 'arcsin', 'arccos', 'arctan', 'det', 'sup', 'inf']);

const MAX_DEPTH = 100;

export function ommlToLatex(node: XNode, depth = 0): string {
  if (depth > MAX_DEPTH) return textContent(node);
  const sub = (n: XNode | undefined) => (n ? ommlToLatex(n, depth + 1).trim() : '');
  const arg = (name: string) => sub(child(node, name));
  switch (node.name) {
    case '#text':
      return '';
    case 't':
      return textContent(node);
    case 'r':
      return children(node, 't').map((t) => textContent(t)).join('');
    case 'f': {
      const type = attr(child(child(node, 'fPr'), 'type'), 'm:val') ?? attr(child(child(node, 'fPr'), 'type'), 'val', true);
      const num = arg('num');
      const den = arg('den');
      return type === 'lin' ? `${num}/${den}` : `\\frac{${num}}{${den}}`;
    }
    case 'sSup':
      return `${group(arg('e'))}^{${arg('sup')}}`;
    case 'sSub':
      return `${group(arg('e'))}_{${arg('sub')}}`;
    case 'sSubSup':
      return `${group(arg('e'))}_{${arg('sub')}}^{${arg('sup')}}`;
    case 'sPre':
      return `{}_{${arg('sub')}}^{${arg('sup')}}${group(arg('e'))}`;
    case 'rad': {
      const deg = arg('deg');
      return deg ? `\\sqrt[${deg}]{${arg('e')}}` : `\\sqrt{${arg('e')}}`;
    }
    case 'd': {
      const pr = child(node, 'dPr');
      const beg = prop(pr, 'begChr') ?? '(';
      const end = prop(pr, 'endChr') ?? ')';
      const sep = prop(pr, 'sepChr') ?? '|';
      const parts = children(node, 'e').map((e) => sub(e));
      return `${delimiter(beg, true)}${parts.join(sep === '|' ? ' | ' : ` ${sep} `)}${delimiter(end, false)}`;
    }
    case 'nary': {
      const chr = prop(child(node, 'naryPr'), 'chr') ?? '∫';
      const op = NARY[chr] ?? chr;
      const lower = arg('sub');
      const upper = arg('sup');
      return `${op}${lower ? `_{${lower}}` : ''}${upper ? `^{${upper}}` : ''}{${arg('e')}}`;
    }
    case 'func': {
      const name = arg('fName');
      const fn = FUNCTIONS.has(name) ? `\\${name}` : name;
      return `${fn}{${arg('e')}}`;
    }
    case 'acc': {
      const chr = prop(child(node, 'accPr'), 'chr') ?? '\u0302';
      return `${ACCENTS[chr] ?? '\\hat'}{${arg('e')}}`;
    }
    case 'bar': {
      const pos = prop(child(node, 'barPr'), 'pos');
      return `${pos === 'top' ? '\\overline' : '\\underline'}{${arg('e')}}`;
    }
    case 'groupChr': {
      const pos = prop(child(node, 'groupChrPr'), 'pos');
      return `${pos === 'top' ? '\\overbrace' : '\\underbrace'}{${arg('e')}}`;
    }
    case 'limLow':
      return `${group(arg('e'))}_{${arg('lim')}}`;
    case 'limUpp':
      return `${group(arg('e'))}^{${arg('lim')}}`;
    case 'm': {
      const rows = children(node, 'mr').map((mr) => children(mr, 'e').map((e) => sub(e)).join(' & '));
      return `\\begin{matrix}${rows.join(' \\\\ ')}\\end{matrix}`;
    }
    case 'eqArr': {
      const rows = children(node, 'e').map((e) => sub(e));
      return `\\begin{array}{l}${rows.join(' \\\\ ')}\\end{array}`;
    }
    case 'rPr':
    case 'ctrlPr':
    case 'oMathParaPr':
    case 'fPr':
    case 'dPr':
    case 'naryPr':
    case 'funcPr':
    case 'accPr':
    case 'barPr':
    case 'radPr':
    case 'sSupPr':
    case 'sSubPr':
    case 'sSubSupPr':
    case 'sPrePr':
    case 'groupChrPr':
    case 'limLowPr':
    case 'limUppPr':
    case 'mPr':
    case 'eqArrPr':
    case 'boxPr':
    case 'borderBoxPr':
    case 'phantPr':
      return '';
    default:
      // Containers (oMath, oMathPara, e, num, den, box, borderBox, phant, ...): their children in order.
      return node.children.map((c) => ommlToLatex(c, depth + 1)).join('');
  }
}

function prop(pr: XNode | undefined, name: string): string | undefined {
  const el = child(pr, name);
  return el ? (attr(el, 'm:val') ?? attr(el, 'val', true) ?? '') : undefined;
}

function group(text: string): string {
  return text.length <= 1 ? text : `{${text}}`;
}

function delimiter(chr: string, open: boolean): string {
  if (chr === '') return '';
  if (chr === '{') return '\\{';
  if (chr === '}') return '\\}';
  if (chr === '‖') return '\\|';
  if (chr === '⌈') return '\\lceil ';
  if (chr === '⌉') return ' \\rceil';
  if (chr === '⌊') return '\\lfloor ';
  if (chr === '⌋') return ' \\rfloor';
  if (chr === '〈' || chr === '⟨') return '\\langle ';
  if (chr === '〉' || chr === '⟩') return ' \\rangle';
  return open ? chr : chr;
}

/** Placeholder markers for equations carried through mammoth and turndown as plain text. */
export const MATH_OPEN = '\uE100';
export const MATH_CLOSE = '\uE101';

/**
 * Replaces the equations of a WordprocessingML part with placeholder runs and returns their LaTeX
 * (`$…$` inline, `$$…$$` display). The caller substitutes the placeholders after conversion.
 */
export function extractEquations(xml: string): { xml: string; equations: string[] } {
  const mathPrefix = namespacePrefix(xml, /^http:\/\/(schemas\.openxmlformats\.org\/officeDocument\/2006\/math|purl\.oclc\.org\/ooxml\/officeDocument\/math)$/);
  if (!mathPrefix) return { xml, equations: [] };
  const w = namespacePrefix(xml, /^http:\/\/(schemas\.openxmlformats\.org\/wordprocessingml\/2006\/main|purl\.oclc\.org\/ooxml\/wordprocessingml\/main)$/) ?? 'w';
  const equations: string[] = [];
  const replace = (fragment: string, display: boolean): string => {
    let latex: string;
    try {
      const doc = parseXml(fragment, 'equation');
      latex = doc.children.map((c) => ommlToLatex(c)).join('').replace(/\s+/g, ' ').trim();
    } catch {
      latex = '';
    }
    if (!latex) return '';
    equations.push(display ? `$$${latex}$$` : `$${latex}$`);
    return `<${w}:r><${w}:t xml:space="preserve">${MATH_OPEN}${equations.length - 1}${MATH_CLOSE}</${w}:t></${w}:r>`;
  };
  const p = mathPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let out = xml.replace(new RegExp(`<${p}:oMathPara\\b[\\s\\S]*?</${p}:oMathPara>`, 'g'), (m) => replace(m, true));
  out = out.replace(new RegExp(`<${p}:oMath\\b[\\s\\S]*?</${p}:oMath>`, 'g'), (m) => replace(m, false));
  return { xml: out, equations };
}

export function restoreEquations(markdown: string, equations: string[]): string {
  if (equations.length === 0) return markdown;
  return markdown.replace(/\uE100(\d+)\uE101/g, (_, i: string) => equations[Number(i)] ?? '');
}

function namespacePrefix(xml: string, uri: RegExp): string | undefined {
  const head = xml.slice(0, 20_000);
  for (const m of head.matchAll(/xmlns:([\w.-]+)\s*=\s*["']([^"']+)["']/g)) if (uri.test(m[2]!)) return m[1];
  return undefined;
}

/**
 * The page as Markdown, computed inside the page (`page.evaluate`) from the rendered DOM: headings,
 * paragraphs, links, lists, emphasis, code, quotes and tables; scripts, styles, hidden elements and
 * form controls are left out. Playwright sends the function's source to the page, so it may use nothing
 * from outside its own body; the few DOM shapes it reads are declared here, as the project has no DOM
 * types.
 */

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}
interface DomElement extends DomNode {
  getAttribute(name: string): string | null;
  hidden?: boolean;
  href?: string;
}
interface DomWindow {
  document: { title: string; body: DomElement | null };
  getComputedStyle(element: DomElement): { display: string; visibility: string };
}

export interface PageMarkdown {
  title: string;
  markdown: string;
}

/** `limit`: at most this many characters come back (the page's own text can be any length). */
export function pageToMarkdown(limit: number): PageMarkdown {
  const win = globalThis as unknown as DomWindow;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'OBJECT', 'EMBED', 'HEAD', 'INPUT', 'SELECT', 'TEXTAREA', 'BUTTON']);
  const BLOCK = new Set(['P', 'DIV', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'FORM', 'FIGURE', 'FIGCAPTION', 'DL', 'DT', 'DD', 'ADDRESS', 'DETAILS', 'SUMMARY']);

  const inline = (text: string) => text.replace(/\s+/g, ' ');
  const visible = (el: DomElement) => {
    if (el.hidden || el.getAttribute('aria-hidden') === 'true') return false;
    const style = win.getComputedStyle(el);
    return style.display !== 'none' && style.visibility !== 'hidden';
  };

  function children(node: DomNode, depth: number): string {
    let out = '';
    for (let i = 0; i < node.childNodes.length; i++) out += render(node.childNodes[i]!, depth);
    return out;
  }

  function render(node: DomNode, depth: number): string {
    if (node.nodeType === 3) return inline(node.textContent ?? '');
    if (node.nodeType !== 1) return '';
    const el = node as DomElement;
    const tag = el.nodeName.toUpperCase();
    if (SKIP.has(tag) || !visible(el)) return '';
    const inner = () => children(el, depth).trim();
    switch (tag) {
      case 'H1':
      case 'H2':
      case 'H3':
      case 'H4':
      case 'H5':
      case 'H6':
        return `\n\n${'#'.repeat(Number(tag[1]))} ${inner()}\n\n`;
      case 'BR':
        return '\n';
      case 'HR':
        return '\n\n---\n\n';
      case 'A': {
        const text = inner();
        const href = el.href ?? '';
        if (!text) return '';
        return href && !href.startsWith('javascript:') ? `[${text}](${href})` : text;
      }
      case 'IMG': {
        const alt = el.getAttribute('alt');
        return alt ? `![${inline(alt)}]` : '';
      }
      case 'STRONG':
      case 'B': {
        const text = inner();
        return text ? `**${text}**` : '';
      }
      case 'EM':
      case 'I': {
        const text = inner();
        return text ? `*${text}*` : '';
      }
      case 'CODE':
        return `\`${(el.textContent ?? '').trim()}\``;
      case 'PRE':
        return `\n\n\`\`\`\n${(el.textContent ?? '').replace(/\n$/, '')}\n\`\`\`\n\n`;
      case 'BLOCKQUOTE':
        return `\n\n${inner().split('\n').map((line) => `> ${line}`).join('\n')}\n\n`;
      case 'UL':
      case 'OL': {
        let out = '\n';
        let n = 0;
        for (let i = 0; i < el.childNodes.length; i++) {
          const item = el.childNodes[i]!;
          if (item.nodeType !== 1 || item.nodeName.toUpperCase() !== 'LI' || !visible(item as DomElement)) continue;
          n++;
          const marker = tag === 'OL' ? `${n}.` : '-';
          const text = children(item, depth + 1).trim().replace(/\n{2,}/g, '\n');
          out += `${'  '.repeat(depth)}${marker} ${text}\n`;
        }
        return `${out}\n`;
      }
      case 'TABLE': {
        const rows: string[][] = [];
        const collect = (parent: DomNode) => {
          for (let i = 0; i < parent.childNodes.length; i++) {
            const child = parent.childNodes[i]!;
            const name = child.nodeName.toUpperCase();
            if (name === 'TR') {
              const cells: string[] = [];
              for (let j = 0; j < child.childNodes.length; j++) {
                const cell = child.childNodes[j]!;
                const cellName = cell.nodeName.toUpperCase();
                if (cellName === 'TD' || cellName === 'TH') cells.push(children(cell, depth).trim().replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|'));
              }
              rows.push(cells);
            } else if (name === 'THEAD' || name === 'TBODY' || name === 'TFOOT') {
              collect(child);
            }
          }
        };
        collect(el);
        if (!rows.length) return '';
        const width = Math.max(...rows.map((row) => row.length));
        const line = (row: string[]) => `| ${Array.from({ length: width }, (_, i) => row[i] ?? '').join(' | ')} |`;
        return `\n\n${[line(rows[0]!), line(Array(width).fill('---')), ...rows.slice(1).map(line)].join('\n')}\n\n`;
      }
      case 'LI':
      case 'TR':
        return `\n${inner()}\n`;
      default:
        return BLOCK.has(tag) ? `\n\n${inner()}\n\n` : children(el, depth);
    }
  }

  const body = win.document.body;
  const markdown = body
    ? render(body, 0)
        .split('\n')
        .map((line) => line.replace(/[ \t]+$/, ''))
        .join('\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()
    : '';
  return { title: String(win.document.title).slice(0, 1000), markdown: markdown.slice(0, limit) };
}

import { expect } from 'chai';
import { applyGuardrails } from '../activities/guardrails/index.js';
import { guardrail, redacted } from './support/guardrail-fixtures.js';

/** Label redaction of one entity type (or all); the text unchanged when nothing was found. */
async function labelled(text: string, entities?: string[]): Promise<string> {
  const outcome = await applyGuardrails([guardrail('pii', entities ? { entities } : {}, { action: 'redact' })], text, 'output');
  return outcome.text;
}

describe('guardrails engine: pii', () => {
  describe('email', () => {
    it('finds addresses, including subaddresses, subdomains and non-ASCII letters', async () => {
      expect(await labelled('mail john.doe+news@mail.example.co.uk.')).to.equal('mail [EMAIL].');
      expect(await labelled('<ann_o@example.org>, bob@example.io')).to.equal('<[EMAIL]>, [EMAIL]');
      expect(await labelled('écrire à zoë@exemple.fr')).to.equal('écrire à [EMAIL]');
    });

    it('ignores things that only look a little like addresses', async () => {
      for (const text of ['@handle', 'a@b', 'user@localhost', 'x @ example.com', 'name@example.c']) {
        expect(await labelled(text), text).to.equal(text);
      }
    });
  });

  describe('credit_card', () => {
    it('finds 13–19 digit numbers that pass the Luhn check, grouped or not', async () => {
      const cards = ['4111 1111 1111 1111', '4111-1111-1111-1111', '4111111111111111', '5500 0000 0000 0004', '3782 822463 10005', '4222222222222', '6011111111111117'];
      for (const card of cards) expect(await labelled(`pay with ${card} now`, ['credit_card']), card).to.equal('pay with [CREDIT_CARD] now');
    });

    it('finds two cards written one after the other', async () => {
      expect(await labelled('4111 1111 1111 1111 5500 0000 0000 0004')).to.equal('[CREDIT_CARD] [CREDIT_CARD]');
    });

    it('does not take a number failing the Luhn check for a card (nor for anything else)', async () => {
      for (const number of ['4111 1111 1111 1112', '4111111111111112', '1234-5678-9012-3456', '1234567890123456']) {
        expect(await labelled(`ref ${number}`), number).to.equal(`ref ${number}`);
      }
    });

    it('does not find cards inside longer numbers or identifiers', async () => {
      for (const text of ['41111111111111110', 'id 4111111111111111abc', 'x4111111111111111', '00000000000000000']) {
        expect(await labelled(text), text).to.equal(text);
      }
    });
  });

  describe('us_ssn', () => {
    it('finds AAA-GG-SSSS numbers in issued ranges', async () => {
      expect(await labelled('SSN 123-45-6789, 078-05-1120 and 665-01-0001.')).to.equal('SSN [US_SSN], [US_SSN] and [US_SSN].');
    });

    it('skips never-issued ranges: area 000, 666 and 9xx, group 00, serial 0000 (and does not call them phones)', async () => {
      for (const ssn of ['000-12-3456', '666-12-3456', '900-12-3456', '999-12-3456', '123-00-4567', '123-45-0000']) {
        expect(await labelled(`SSN ${ssn}`), ssn).to.equal(`SSN ${ssn}`);
      }
    });

    it('needs the dashed shape, standing alone', async () => {
      for (const text of ['123456789', '1123-45-6789', '123-45-67890', 'A123-45-6789']) {
        expect(await labelled(text, ['us_ssn']), text).to.equal(text);
      }
    });
  });

  describe('iban', () => {
    it('finds IBANs with a valid mod-97 check, printed or electronic, in any case', async () => {
      const ibans = [
        'DE89 3704 0044 0532 0130 00',
        'DE89370400440532013000',
        'GB82 WEST 1234 5698 7654 32',
        'FR14 2004 1010 0505 0001 3M02 606',
        'nl91 abna 0417 1643 00',
        'BE68539007547034',
        'NO9386011117947',
      ];
      for (const iban of ibans) expect(await labelled(`to ${iban}, thanks`), iban).to.equal('to [IBAN], thanks');
    });

    it('stops at the country length, leaving the following words alone', async () => {
      expect(await labelled('IBAN DE89 3704 0044 0532 0130 00 IS MINE')).to.equal('IBAN [IBAN] IS MINE');
    });

    it('refuses a wrong check digit or a wrong length for the country', async () => {
      for (const text of ['DE89 3704 0044 0532 0130 01', 'DE88370400440532013000', 'DE89 3704 0044 0532 0130 0', 'DE89 3704 0044 0532 0130 000']) {
        expect(await labelled(text), text).to.equal(text);
      }
    });
  });

  describe('ip_address', () => {
    it('finds IPv4 addresses with octets 0–255', async () => {
      expect(await labelled('from 192.168.1.20 and 8.8.8.8.')).to.equal('from [IP_ADDRESS] and [IP_ADDRESS].');
      expect(await labelled('host 256.1.1.1 and 1.2.3.999')).to.equal('host 256.1.1.1 and 1.2.3.999');
    });

    it('finds IPv6 addresses, compressed, bracketed or IPv4-mapped', async () => {
      expect(await labelled('2001:0db8:85a3:0000:0000:8a2e:0370:7334')).to.equal('[IP_ADDRESS]');
      expect(await labelled('try ::1 or [fe80::1]:8080 or ::ffff:192.0.2.1.')).to.equal('try [IP_ADDRESS] or [[IP_ADDRESS]]:8080 or [IP_ADDRESS].');
    });

    it('does not take version strings, times or code for addresses', async () => {
      for (const text of ['version 1.2.3', 'v1.2.3.4', 'release 1.2.3.4.5', 'at 12:30:45', 'std::vector', 'a :: b', 'MAC 00:1A:2B:3C:4D:5E']) {
        expect(await labelled(text), text).to.equal(text);
      }
    });
  });

  describe('phone', () => {
    it('finds international and common national formats', async () => {
      const phones = ['+1 (555) 123-4567', '+44 20 7946 0958', '+14155552671', '+49 30 1234567', '(555) 123-4567', '555-123-4567', '555.123.4567', '020 7946 0958', '06 12 34 56 78', '555-1234'];
      for (const phone of phones) expect(await labelled(`call ${phone} today`, ['phone']), phone).to.equal('call [PHONE] today');
    });

    it('does not take dates, plain or short numbers, decimals, amounts or cards for phones', async () => {
      const others = ['2024-01-15', '15.01.2024', '01/15/2024', '12-31-2023', '12345', '1234567890', '3.14159265', '1 234 567', '2019-2024', '10:30:45', '4111 1111 1111 1111', '+1'];
      for (const text of others) expect(await labelled(`on ${text} ok`, ['phone']), text).to.equal(`on ${text} ok`);
    });

    it('does not swallow a date that follows a number', async () => {
      expect(await labelled('call 555-123-4567 2024-01-15', ['phone'])).to.equal('call [PHONE] 2024-01-15');
    });
  });

  it('looks only for the configured entities', async () => {
    const text = 'ann@example.com 123-45-6789';
    expect(await labelled(text, ['us_ssn'])).to.equal('ann@example.com [US_SSN]');
    expect(await labelled(text, ['email'])).to.equal('[EMAIL] 123-45-6789');
  });

  it('masks values keeping their last 4 characters (at most half of a short one)', async () => {
    const mask = { redaction: 'mask' };
    expect(await redacted('pii', mask, 'card 4111 1111 1111 1111 ok')).to.equal('card ***************1111 ok');
    expect(await redacted('pii', mask, 'mail ann@example.com')).to.equal('mail ***********.com');
    expect(await redacted('pii', mask, 'ssn 123-45-6789')).to.equal('ssn *******6789');
    expect(await redacted('pii', mask, 'host ::1')).to.equal('host **1');
  });

  it('reports entity types and counts, never the values', async () => {
    const text = 'ann@example.com, bob@example.com, 4111 1111 1111 1111, 123-45-6789';
    const outcome = await applyGuardrails([guardrail('pii', {}, { action: 'warn' })], text, 'input');
    const { detail } = outcome.trips[0]!;
    expect(detail).to.equal('text contains personal data: 2 email, 1 credit_card, 1 us_ssn');
    for (const secret of ['ann', 'example', '4111', '6789']) expect(detail).not.to.include(secret);
    expect(outcome.text).to.equal(text);
  });

  it('blocks on the first value found', async () => {
    const outcome = await applyGuardrails([guardrail('pii', { entities: ['iban'] })], 'pay DE89370400440532013000', 'input');
    expect(outcome.blocked).to.include({ kind: 'pii', action: 'block', detail: 'text contains personal data: 1 iban' });
  });
});

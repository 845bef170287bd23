// An event's data shown as it was published: read from the answer's text, never through JavaScript
// values (which would round numbers past 2^53 and move members named like integers to the front).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index just past the string that starts at `start` (a quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text.charCodeAt(i) !== QUOTE) i += text.charCodeAt(i) === BACKSLASH ? 2 : 1;
  return i + 1;
}

/** The text of a member of the top-level object of compact JSON text (as the API writes it). */
export function memberText(text: string, name: string): string | undefined {
  const wanted = JSON.stringify(name);
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (depth === 1 && text[end] === ':' && text.slice(i, end) === wanted) {
        let close = end + 1;
        let inner = 0;
        for (; close < text.length; close++) {
          const d = text[close];
          if (d === '"') close = stringEnd(text, close) - 1;
          else if (d === '{' || d === '[') inner++;
          else if (d === '}' || d === ']') {
            if (inner === 0) break;
            inner--;
          } else if (d === ',' && inner === 0) break;
        }
        return text.slice(end + 1, close);
      }
      i = end - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

/** Compact JSON text laid out two spaces an indent, every string and number as written. */
export function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (text[i + 1] === close) {
        out += c + close;
        i++;
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') out += `,${newline()}`;
    else if (c === ':') out += ': ';
    else out += c;
  }
  return out;
}

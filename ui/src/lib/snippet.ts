// A search hit's snippet marks each matched term as «term». Split into parts the view
// renders as text and <mark> (never as HTML: snippets are agent output).
export interface SnippetPart {
  text: string;
  mark: boolean;
}

export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let rest = snippet.replace(/\s+/g, " ");
  while (rest.length) {
    const open = rest.indexOf("«");
    const close = open < 0 ? -1 : rest.indexOf("»", open + 1);
    if (open < 0 || close < 0) {
      parts.push({ text: rest, mark: false });
      break;
    }
    if (open > 0) parts.push({ text: rest.slice(0, open), mark: false });
    parts.push({ text: rest.slice(open + 1, close), mark: true });
    rest = rest.slice(close + 1);
  }
  return parts;
}

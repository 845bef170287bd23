// The project's theme as CSS custom properties, with readable contrast enforced: text on its background
// must reach 4.5:1 (WCAG AA), else the default pair is used; a button's label is white or near-black,
// whichever reads better on the primary colour, and the primary falls back when neither reaches 4.5:1.
export interface Theme {
  primary: string;
  accent: string;
  background: string;
  text: string;
}

const DEFAULT: Theme = { primary: '#1D4ED8', accent: '#0F766E', background: '#FFFFFF', text: '#111827' };
const DARK = '#111827';

function luminance(hex: string): number {
  const channels = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255);
  const [r, g, b] = channels.map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [
    number,
    number,
    number,
  ];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The colours the page uses: the project's where they read, the defaults where they would not. */
export function readableTheme(theme: Theme): Theme & { onPrimary: string } {
  const pair = contrast(theme.text, theme.background) >= 4.5 ? theme : DEFAULT;
  const labelOn = (colour: string) =>
    contrast('#FFFFFF', colour) >= contrast(DARK, colour) ? '#FFFFFF' : DARK;
  const primaryReads = (colour: string) =>
    contrast(labelOn(colour), colour) >= 4.5 && contrast(colour, pair.background) >= 3;
  const primary = primaryReads(theme.primary) ? theme.primary : DEFAULT.primary;
  const accent = contrast(theme.accent, pair.background) >= 4.5 ? theme.accent : pair.text;
  return { primary, accent, background: pair.background, text: pair.text, onPrimary: labelOn(primary) };
}

/** Sets the theme on the document (through the CSSOM, which the CSP allows; no inline style). */
export function applyTheme(theme: Theme) {
  const colours = readableTheme(theme);
  const root = document.documentElement.style;
  root.setProperty('--primary', colours.primary);
  root.setProperty('--on-primary', colours.onPrimary);
  root.setProperty('--accent', colours.accent);
  root.setProperty('--background', colours.background);
  root.setProperty('--text', colours.text);
}

// The project's colours made readable (no DOM here, so the tests check the same arithmetic): text on its
// background must reach 4.5:1 (WCAG AA), else the default pair is used; a button's label is white or near-black,
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

/** The tones of state badges: each a dark and a light shade, the one that stands out on the background. */
const TONES = {
  ok: ['#15803D', '#4ADE80'],
  warn: ['#B45309', '#FBBF24'],
  bad: ['#B91C1C', '#F87171'],
  muted: ['#4B5563', '#9CA3AF'],
} as const;
export type Tone = keyof typeof TONES;

/**
 * Each badge's fill and label on this background: the shade with the higher contrast against the page
 * (a badge is a component, so 3:1 at least, WCAG 1.4.11; both shades are tried), its label white or
 * near-black, whichever reads better (4.5:1 for its text).
 */
export function badgeColours(background: string): Record<Tone, { fill: string; label: string }> {
  const labelOn = (colour: string) =>
    contrast('#FFFFFF', colour) >= contrast(DARK, colour) ? '#FFFFFF' : DARK;
  const entries = Object.entries(TONES).map(([tone, shades]) => {
    const fill = [...shades].sort((a, b) => contrast(b, background) - contrast(a, background))[0] as string;
    return [tone, { fill, label: labelOn(fill) }];
  });
  return Object.fromEntries(entries) as Record<Tone, { fill: string; label: string }>;
}

// The project's theme set on the document as CSS custom properties, in the colours colours.ts made readable.
import { badgeColours, readableTheme, type Theme } from './colours.ts';

export type { Theme };

/** Sets the theme on the document (through the CSSOM, which the CSP allows; no inline style). */
export function applyTheme(theme: Theme) {
  const colours = readableTheme(theme);
  const root = document.documentElement.style;
  root.setProperty('--primary', colours.primary);
  root.setProperty('--on-primary', colours.onPrimary);
  root.setProperty('--accent', colours.accent);
  root.setProperty('--background', colours.background);
  root.setProperty('--text', colours.text);
  for (const [tone, { fill, label }] of Object.entries(badgeColours(colours.background))) {
    root.setProperty(tone === 'muted' ? '--muted-tone' : `--${tone}`, fill);
    root.setProperty(`--on-${tone}`, label);
  }
}

const svgNamespace = 'http://www.w3.org/2000/svg';

// Line icons on a 24-unit grid, drawn with the text colour: no icon font or emoji font needed.
const paths = {
  attach: 'M17 8.5l-7.6 7.6a2.1 2.1 0 0 1-3-3l7.9-7.9a3.9 3.9 0 0 1 5.5 5.5l-8 8a5.7 5.7 0 0 1-8-8l7.1-7.1',
  bell: 'M6 16.5V11a6 6 0 0 1 12 0v5.5l1.5 1.5h-15zM10 20.5a2 2 0 0 0 4 0',
  book: 'M5 4.5A1.5 1.5 0 0 1 6.5 3H19v15H6.5A1.5 1.5 0 0 0 5 19.5zM5 19.5A1.5 1.5 0 0 0 6.5 21H19v-3M9 7h6',
  chevron: 'M7 10l5 5 5-5',
  clock: 'M12 3.5a8.5 8.5 0 1 0 0 17 8.5 8.5 0 0 0 0-17zM12 7.5V12l3 2',
  close: 'M6 6l12 12M18 6L6 18',
  download: 'M12 4v11M7 10.5l5 5 5-5M5 20h14',
  edit: 'M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  flame: 'M12 3c.8 3.2 5 5.4 5 10.2a5 5 0 0 1-10 0c0-2.2 1-3.7 2.2-4.9.1 2 .9 3.2 2.1 3.4-.4-3 .1-5.8.7-8.7z',
  gauge: 'M4.5 17a8.5 8.5 0 1 1 15 0M12 13l3.5-4',
  image: 'M4 5h16v14H4zM4 16l5-5 4 4 2.5-2.5L20 17M15.5 9.5h.01',
  mic: 'M12 3a3 3 0 0 0-3 3v6a3 3 0 0 0 6 0V6a3 3 0 0 0-3-3zM5.5 11.5a6.5 6.5 0 0 0 13 0M12 18v3M8.5 21h7',
  model: 'M12 3l8 4.5v9L12 21l-8-4.5v-9zM4 7.5l8 4.5 8-4.5M12 12v9',
  memory: 'M5 4.5h10.5a3 3 0 0 1 3 3V20H8a3 3 0 0 1-3-3zM5 17a3 3 0 0 1 3-3h10.5M9 8h6',
  menu: 'M4 7h16M4 12h16M4 17h16',
  people: 'M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM2.5 20a6.5 6.5 0 0 1 13 0M16 4.3a3.5 3.5 0 0 1 0 6.4M18 14.2a6.5 6.5 0 0 1 3.5 5.8',
  person: 'M12 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4.5 20.5a7.5 7.5 0 0 1 15 0',
  plug: 'M9 3v5M15 3v5M6.5 8h11v3.5a5.5 5.5 0 0 1-11 0zM12 17v4',
  plus: 'M12 5v14M5 12h14',
  refresh: 'M19.5 12a7.5 7.5 0 1 1-2.2-5.3M19.5 4.5v4.2h-4.2',
  share: 'M15.5 5.5a2.5 2.5 0 1 0 5 0 2.5 2.5 0 1 0-5 0M3.5 12a2.5 2.5 0 1 0 5 0 2.5 2.5 0 1 0-5 0M15.5 18.5a2.5 2.5 0 1 0 5 0 2.5 2.5 0 1 0-5 0M8.2 10.8l7.6-4.1M8.2 13.2l7.6 4.1',
  sliders: 'M4 7h9M17 7h3M4 17h3M11 17h9M15 4.5v5M9 14.5v5',
  speaker: 'M4 9.5h3.5L12 5.5v13l-4.5-4H4zM15.5 9a4 4 0 0 1 0 6M18 6.5a7.5 7.5 0 0 1 0 11',
  star: 'M12 3.5l2.6 5.4 5.9.8-4.3 4.1 1.1 5.8L12 16.8l-5.3 2.8 1.1-5.8-4.3-4.1 5.9-.8z',
  trash: 'M4 7h16M9.5 7V4.5h5V7M6.5 7l1 13h9l1-13M10 11v5.5M14 11v5.5',
  wave: 'M4 10v4M8 7v10M12 4v16M16 7v10M20 10v4',
  wrench: 'M14.5 4a4.5 4.5 0 0 0-4.2 6.1L4 16.4 7.6 20l6.3-6.3A4.5 4.5 0 0 0 20 9.5l-2.8 2.8-3.5-3.5L16.5 6A4.5 4.5 0 0 0 14.5 4z',
};

/** An inline SVG icon; decorative, so the button or text beside it must carry the name. */
export function icon(name, { filled = false } = {}) {
  const svg = document.createElementNS(svgNamespace, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', `icon icon-${name}`);
  const path = document.createElementNS(svgNamespace, 'path');
  path.setAttribute('d', paths[name]);
  if (filled) path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

/** Puts the icon named by each `data-icon` placeholder in the page's static markup. */
export function fillIconPlaceholders(root = document) {
  for (const placeholder of root.querySelectorAll('[data-icon]')) placeholder.replaceWith(icon(placeholder.dataset.icon));
}

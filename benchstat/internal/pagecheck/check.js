window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const out = {tables: [], charts: [], overflow: [], width: document.documentElement.scrollWidth, window: window.innerWidth};
  const sized = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  document.querySelectorAll('table[data-table]').forEach(t => { if (sized(t) && t.rows.length > 0) out.tables.push(t.dataset.table); });
  document.querySelectorAll('figure[data-chart]').forEach(f => {
    const svg = f.querySelector('svg');
    if (svg && sized(svg) && svg.querySelectorAll('path, polyline').length > 0) out.charts.push(f.dataset.chart);
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(tx => {
      const r = tx.getBoundingClientRect();
      // Glyph boxes are a font's whole em; a quarter of it may stick out.
      const slack = parseFloat(getComputedStyle(tx).fontSize) / 4;
      const past = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom);
      if (past > slack)
        out.overflow.push('chart ' + f.dataset.chart + ': "' + tx.textContent + '" runs ' + Math.round(past) + 'px outside the chart');
    });
  });
  document.body.querySelectorAll('*').forEach(e => {
    if (e.closest('svg') || e.id === 'kvbench-check') return;
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.overflow.push(e.tagName.toLowerCase() + ' "' + e.textContent.trim().slice(0, 60) + '" is ' + e.scrollWidth + 'px wide in ' + e.clientWidth + 'px');
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 1)
      out.overflow.push(e.tagName.toLowerCase() + ' "' + e.textContent.trim().slice(0, 60) + '" ends at ' + Math.round(r.right) + 'px, past the window');
  });
  const pre = document.createElement('pre');
  pre.id = 'kvbench-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});

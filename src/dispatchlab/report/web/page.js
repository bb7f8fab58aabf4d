// The interactive report's script: draws every figure (plotly.js), links the time axes,
// switches tabs, sorts tables; window.reportRenderedAt = ms from navigation start to the
// first figures drawn.
(function(){
  const specs = JSON.parse(document.getElementById('report-figures').textContent);
  const byId = {}; specs.forEach(s => { byId[s.id] = s; });
  const config = {responsive: true, displaylogo: false,
                  modeBarButtonsToRemove: ['select2d', 'lasso2d']};
  const linked = []; let syncing = false;
  function link(div){
    linked.push(div);
    div.on('plotly_relayout', ev => {
      if (syncing) return;
      let upd = null;
      if ('xaxis.range[0]' in ev) upd = {'xaxis.range': [ev['xaxis.range[0]'], ev['xaxis.range[1]']]};
      else if (ev['xaxis.range']) upd = {'xaxis.range': ev['xaxis.range']};
      else if (ev['xaxis.autorange']) upd = {'xaxis.autorange': true};
      if (!upd) return;
      syncing = true;
      Promise.all(linked.filter(o => o !== div && o.dataset.rendered).map(o => Plotly.relayout(o, upd)))
        .finally(() => { syncing = false; });
    });
  }
  function duration(s){
    const a = Math.abs(s);
    if (a < 120) return s.toFixed(0) + ' s';
    if (a < 5400) return (s / 60).toFixed(1) + ' min';
    if (a < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' d';
  }
  function jobText(j, k){
    const per = j.per_unit_names[j.per_unit[k]];
    return '<b>job ' + j.id[k] + '</b><br>user ' + j.user_names[j.user[k]] + ' · queue ' +
      j.queue_names[j.queue[k]] + '<br>request: ' + j.units[k].toLocaleString('en') +
      (j.units[k] === 1 ? ' unit' : ' units') + (per ? ' (' + per + ' each)' : '') + ', ' +
      duration(j.wall[k]) + ' wall-time<br>wait ' + duration(j.wait[k]) + ' · ran ' +
      duration(j.ran[k]) + '<br>' + j.outcome_names[j.outcome[k]];
  }
  function withHover(s){
    if (!s.jobs) return s.data;
    return s.data.map(t => t.customdata ? Object.assign({}, t, {
      hovertext: t.customdata.map(k => jobText(s.jobs, k)), hoverinfo: 'text'}) : t);
  }
  function draw(id){
    const s = byId[id]; const div = document.getElementById(id);
    if (!s || !div || div.dataset.drawing) return Promise.resolve();
    div.dataset.drawing = '1';
    return Plotly.newPlot(div, withHover(s), s.layout, config).then(() => {
      div.dataset.rendered = '1';
      if (s.linked) link(div);
    });
  }
  const first = specs.filter(s => !s.lazy || s.first).map(s => draw(s.id));
  Promise.all(first).then(() => {
    window.reportRenderedAt = performance.now();
    document.body.dataset.rendered = '1';
    const el = document.getElementById('render-time');
    if (el) el.textContent = 'figures drawn ' + (window.reportRenderedAt / 1000).toFixed(2) +
      ' s after opening';
  }).catch(err => { console.error(err); });
  document.querySelectorAll('.tabs button').forEach(b => b.addEventListener('click', () => {
    const group = b.closest('.tabs');
    group.querySelectorAll('button').forEach(o => o.classList.toggle('active', o === b));
    document.querySelectorAll('.tab[data-group="' + group.dataset.group + '"]').forEach(t =>
      t.classList.toggle('active', t.dataset.target === b.dataset.target));
    draw(b.dataset.target).then(() => Plotly.Plots.resize(document.getElementById(b.dataset.target)));
  }));
  document.querySelectorAll('table.sortable th[data-col]').forEach(th => th.addEventListener('click', () => {
    const table = th.closest('table'); const col = +th.dataset.col; const num = th.dataset.num === '1';
    const asc = th.dataset.dir !== 'asc';
    table.querySelectorAll('th[data-col]').forEach(h => { delete h.dataset.dir; });
    th.dataset.dir = asc ? 'asc' : 'desc';
    const body = table.tBodies[0]; const rows = Array.from(body.rows);
    const key = r => { const v = r.cells[col].dataset.v; return num ? (v === '' ? NaN : +v) : v; };
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      if (num) { if (isNaN(x)) return isNaN(y) ? 0 : 1; if (isNaN(y)) return -1; return asc ? x - y : y - x; }
      return asc ? String(x).localeCompare(y) : String(y).localeCompare(x);
    });
    rows.forEach(r => body.appendChild(r));
  }));
})();

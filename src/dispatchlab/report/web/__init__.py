"""The interactive report: Plotly figures (zoomable, linked time axes, hover details),
sortable tables and a section per family of results, in one page that works offline."""

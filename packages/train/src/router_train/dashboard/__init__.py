"""`GET /dashboard`: what `router-train serve` did for its traffic, on one server-rendered page (inline SVG
charts, no script, nothing fetched from elsewhere), from the same records and the same code as
`router-train feedback`."""

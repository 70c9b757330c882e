//go:build !rendercrosscheck

package render

// EnginesPerRender is how many template engines each Render runs: one, the
// parsed-once engine; two under -tags rendercrosscheck (crosscheck.go), so
// tests that bound what one render allocates bound it per engine.
const EnginesPerRender = 1

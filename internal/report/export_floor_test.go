package report

// The floor benchmark (planfloor_bench_test.go) makes the plan's renders
// under the collector settings the plan makes them under, so plan/floor
// measures the plan's work beyond Helm's renders, not its GC tuning.
var WithPlanGC, Retune = withPlanGC, retune

// Package report answers the operator CLI's questions about worker pools as
// Go values, printing nothing (internal/output writes them). It decides what
// a pool, a golden, a chart upgrade or a catalog change does against a
// cluster; it moves nothing and plans no move: internal/rollout plans a move
// on these answers (it reads the fleet with ReadPinsToPlan and asks Plan),
// internal/apply runs it.
//
//	Plan            what will this pool do against my cluster?
//	Rollcheck       will this chart upgrade roll any worker? (RollcheckDeployed: against what runs)
//	Pins            can I delete this golden? (OneGolden, WithDeleteSteps)
//	Adopt           which pools still import over HTTP, and what moving them to goldens takes
//	CatalogPreview  what will the catalog chart do with these values against my cluster?
//	Version         which binary is this, and which charts does it carry?
//	Behind          how is each pool behind what a new pool gets now? (Pins: the fleet's pools behind)
//
// It never resolves a disk source itself: every answer is the pool chart's,
// rendered with Helm's own engine (internal/render) against a Target (a
// cluster-state file, a live cluster or none); what the cluster holds (its
// pools, goldens and worker disks) is read by internal/fleet.
// A chart's refusal is a report; an
// error is bad input or a cluster problem.
//
// Its files depend one way: words, target and chart on nothing
// here; facts on words; plan on facts; pinstypes on facts; pinsfacts and
// pins on pinstypes; adopttypes on plan and pinstypes; catalog on
// adopttypes; adopt on all of them; rollcheck on facts, target and chart;
// suggest on words; pinsone on pinstypes and suggest; catalogpreview on
// facts, target, suggest and adopttypes; behind on facts and target;
// version on nothing; rollingupdate on nothing here; record (the
// rollout's record, its keys and its read: pins reads every record too,
// internal/rollout names one for its target, internal/apply writes it) on
// words and platformvalues.
package report

// Package rollout plans a move of worker pools to a new target as Go values,
// printing and writing nothing (internal/output prints the plan,
// internal/apply runs it). It decides:
//
//	ResolveTarget  the target: a Talos release and schematic, the chart's defaults for a
//	               new pool, osImage.builtin or a factory URL; refused when nothing of the
//	               platform knows it (TargetKnown)
//	Rollout        which pools the selection chooses, which of them move, how (the values
//	               change at the field each flavor came from, the maxSurge that keeps a pool
//	               within the bounds), in which waves, what keeps the rollout from starting,
//	               the other factory a moved pool keeps, and what an earlier run's record
//	               says the rollout wrote
//	HelmReleaseStatus, MachineDeploymentRolledOut
//	               where a moving pool is, as internal/apply waits on it
//
// It decides on internal/report's answers and never against them: the fleet
// is read as pins reads it (report.ReadPinsToPlan), each pool is planned with
// plan's renders (report.Plan), as it is and with its values changed, and
// the chart decides every render. The record it names for its target is
// report.RolloutRecord (pins reads every record too); internal/apply writes
// it.
//
// Its files depend one way, on internal/report and: rolloutstatus on
// nothing here; rolloutsurge on nothing here; rollouttypes on rolloutsurge;
// rolloutvalues on both; rolloutdefault, rolloutfactory, rolloutfactoryhttp
// and rolloutrecord on rollouttypes; rolloutversion on rolloutfactory and
// rolloutfactoryhttp; rollout on all of them.
package rollout

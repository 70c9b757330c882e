package rollout

import (
	"time"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/fleet"
)

// What rollout plans, and what moving a pool reports while it happens. The
// plan is read-only, as every report is; internal/apply patches and waits
// with it, and reports each step as a RolloutEvent.

// FieldManager is the name rollout's patches are made under, as the API
// server records it in a HelmRelease's metadata.managedFields. It says who
// wrote a field to whoever reads the object, and proves nothing: any client
// chooses its field manager's name. Which pools an earlier run moved is read
// from the rollout's record (RolloutRecord).
const FieldManager = "workerimage-rollout"

// Pool states in a rollout plan. Moves and rolling pools make up the waves;
// on-target pools are skipped; the states of BlockingStates keep the
// rollout from starting (the target itself lacks something); every other
// state is a pool that cannot move, listed apart while the rest moves
// (unless --strict).
const (
	// StateMoves: its HelmRelease's spec.values change, and the pool rolls.
	StateMoves = "moves"
	// StateRolling: its values are on the target already (an earlier run
	// patched them) but its MachineDeployment has not rolled onto the new
	// template: the rollout waits for it without patching.
	StateRolling = "rolling"
	// StateOnTarget: its values are on the target and its MachineDeployment
	// runs the template they render, every worker updated: skipped.
	StateOnTarget = "on-target"
	// StateUnresolved: its values cannot be computed as Flux computes them.
	StateUnresolved = "unresolved"
	// StateRefused: the chart refuses the pool at the target, or the target
	// values would not reach its render.
	StateRefused = "refused"
	// StateNeedsEntry, StateNeedsPerClass: no golden of the target flavor on
	// the pool's class (the catalog entry or class to add is in the plan).
	StateNeedsEntry    = "needs-catalog-entry"
	StateNeedsPerClass = "needs-per-class-golden"
	// StateGoldenNotReady: the target golden exists and is not Succeeded: a
	// wave would wait on its import, or on a Failed golden, for ever.
	StateGoldenNotReady = "golden-not-succeeded"
	// StateNoHelmRelease: a plain helm install: rollout patches HelmReleases only.
	StateNoHelmRelease = "no-helmrelease"
	// StateSuspended: its HelmRelease is suspended; Flux would not apply the change.
	StateSuspended = "suspended"
	// StateKustomized: a Flux Kustomization applies its HelmRelease: it
	// would put spec.values back at its next reconcile.
	StateKustomized = "applied-by-kustomization"
	// StateReleaseFailed: helm-controller failed its last release: before
	// this rollout, or of the values an earlier run wrote.
	StateReleaseFailed = "release-failed"
	// StateNotDeployed: no MachineDeployment: the pool never deployed, and
	// a wave would wait on workers that do not exist.
	StateNotDeployed = "not-deployed"
	// StatePostRendered: its HelmRelease has spec.postRenderers: what Flux
	// applies is not what the chart renders, so the plan cannot say what
	// the pool runs once moved.
	StatePostRendered = "post-rendered"
	// StateAboveBound: its roll alone would replace more workers, or clone
	// more disks, at once than --max-workers or --max-clones, and no
	// maxSurge keeps it within (the pool chart takes none, or its
	// maxUnavailable alone is above the bound).
	StateAboveBound = "above-bound"
	// StateOtherFactory: once moved, the pool would import from another
	// Image Factory than the one the catalog publishes for new pools: in a
	// network that publishes a mirror, workers that may never boot. The
	// plan names the --to-factory (and --factory-ca) that fixes it.
	StateOtherFactory = "other-factory"
)

// BlockingStates are what the operator must fix for the target itself (a
// golden to import or add to the catalog): a pool in one of them keeps the
// rollout from starting, since every pool of that flavor would wait on it.
var BlockingStates = []string{StateNeedsEntry, StateNeedsPerClass, StateGoldenNotReady, StateOtherFactory}

// Blocking: a pool in state keeps the rollout from starting.
func Blocking(state string) bool {
	for _, s := range BlockingStates {
		if s == state {
			return true
		}
	}
	return false
}

// RolloutSelection says which pools a rollout moves; every criterion given
// must hold.
type RolloutSelection struct {
	// Namespace keeps the pools of one namespace.
	Namespace string `json:"namespace,omitempty"`
	// Pools name pools: a HelmRelease's name, its Helm release, the pool's
	// objects' name (kubernetes-<cluster>-<pool>), or <namespace>/<any of those>.
	Pools []string `json:"pools,omitempty"`
	// Flavor keeps the pools that boot SCHEMATIC/VERSION today, or with
	// SCHEMATIC/vMAJOR.MINOR any patch of that minor.
	Flavor string `json:"flavor,omitempty"`
	// Exclude leaves out the pools it names, as Pools names them.
	Exclude []string `json:"exclude,omitempty"`
	// Behind keeps the pools that are behind what a new pool gets now, as
	// pins and plan say (Behind).
	Behind bool `json:"behind,omitempty"`
}

// RolloutTarget is where the selected pools move. At least one part is set;
// the parts combine (a flavor with osImage.builtin, a flavor with a factory
// URL), except Builtin with FactoryURL (a clone imports from no factory).
type RolloutTarget struct {
	// TalosVersion and SchematicID are the flavor to boot; "" keeps the
	// pool's own. Defaults sets both to what the chart gives a new pool, and
	// moves each pool to the chart's Kubernetes release of its minor.
	TalosVersion string `json:"talosVersion,omitempty"`
	SchematicID  string `json:"schematicID,omitempty"`
	Defaults     bool   `json:"defaults,omitempty"`
	// Builtin: clone a golden (osImage.builtin), as adopt proposes.
	Builtin bool `json:"builtin,omitempty"`
	// FactoryURL: import over HTTP from this Image Factory (pools on the
	// HTTP path only).
	FactoryURL string `json:"imageFactoryURL,omitempty"`
	// FactoryCA is the PEM the HTTP import trusts at FactoryURL
	// (talos.imageFactoryCA, written in the same change as the URL, so the
	// pool rolls once); FactoryCAFrom names the file it was read from.
	FactoryCA     string `json:"-"`
	FactoryCAFrom string `json:"imageFactoryCAFrom,omitempty"`
}

// RolloutPlan is what rollout answers without --apply: the waves it would
// run, and what keeps it from starting.
type RolloutPlan struct {
	Cluster string `json:"cluster"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart string `json:"chart"`
	// PoolChart is the chart source a HelmRelease's chart reference must
	// name to count as a pool, and who named it (fleet.PoolChart).
	PoolChart string           `json:"poolChart,omitempty"`
	Selection RolloutSelection `json:"selection"`
	// Target is the target as given, Defaults resolved into the flavor;
	// TargetFrom says where that flavor came from when it was not given.
	Target     RolloutTarget `json:"target"`
	TargetFrom string        `json:"targetFrom,omitempty"`
	// WaveSize is the most pools a wave patches at once; MaxWorkers the most
	// workers a wave replaces at once, MaxClones the most clones of one
	// golden a wave has in flight (0: no bound). A pool above a bound on its
	// own takes the maxSurge that keeps it within in the same change, or is
	// listed apart (StateAboveBound); one rolling already gets a wave of
	// its own.
	WaveSize   int `json:"waveSize"`
	MaxWorkers int `json:"maxWorkers"`
	MaxClones  int `json:"maxClones"`
	// Strict: a pool that cannot move keeps the rollout from starting.
	Strict bool `json:"strict,omitempty"`
	// Record is the rollout's record, ConfigMap <namespace>/<name> in the
	// platform's namespace: what earlier runs to this target wrote, read to
	// know which pools are on their way, and what --apply adds each write to
	// (RolloutRecord).
	Record string `json:"record"`
	// RecordIgnored says why the ConfigMap under the record's name was not
	// read as this target's record (it is another target's, or names none):
	// no pool is waited on for it.
	RecordIgnored string `json:"recordIgnored,omitempty"`
	// Selected counts the pools the selection kept.
	Selected int `json:"selected"`
	// Waves are the pools to move (rolling ones first), WaveSize each.
	Waves []RolloutWave `json:"waves"`
	// OnTarget are the selected pools already on the target: skipped.
	OnTarget []RolloutPool `json:"onTarget"`
	// Restore are the pools on the target whose roll an earlier run bounded
	// with a maxSurge and that stopped before it put their own back (the
	// rollout's record keeps both, SurgeRestore): --apply puts it back after
	// the last wave, as for the pools it moves.
	Restore []RolloutPool `json:"restore,omitempty"`
	// Blocked are the selected pools that keep the rollout from starting
	// (a BlockingStates state: the target's golden is missing or not
	// Succeeded), each with its state and reason.
	Blocked []RolloutPool `json:"blocked"`
	// CannotMove are the selected pools the rollout cannot move (refused,
	// never deployed, release failed, unresolved, post-rendered, suspended,
	// applied by a Kustomization, without a HelmRelease), each with its
	// state and a reason that says the fix: left where they are while the
	// rest moves, unless Strict.
	CannotMove []RolloutPool `json:"cannotMove"`
	// Unknown are pools --flavor or --behind cannot judge, since what they
	// run cannot be read (their values are not resolved, or resolve no
	// image): not moved, and not keeping the rollout from starting.
	Unknown []RolloutPool `json:"unknown"`
	// Catalog is the catalog's images list with the entries or classes the
	// blocked pools wait for (as adopt writes it); nil when none is missing.
	Catalog *report.AdoptCatalog `json:"catalog,omitempty"`
	// CanStart: nothing is blocked (and, with Strict, every selected pool
	// can move). With no wave, nothing is to be done.
	CanStart bool `json:"canStart"`
	// OtherFactoryPools counts the pools that will import from another
	// Image Factory than the one new pools get (each says so), and
	// FactoryCommand is the command that moves them all, flavor and factory
	// in one re-image, when one does (else each pool has its own). Where the
	// catalog publishes that factory, the pool is blocked (StateOtherFactory,
	// counted in OtherFactoryBlocked); where _cluster or the chart's built-in
	// gives it, a note keeps no pool from starting, --strict or not: a
	// pool's own factory may be one its workers reach.
	// TargetKnown says how --to-talos is known (what names it, or the
	// factories asked); nil for another target.
	TargetKnown         *TargetKnown `json:"targetKnown,omitempty"`
	OtherFactoryPools   int          `json:"otherFactoryPools,omitempty"`
	OtherFactoryBlocked int          `json:"otherFactoryBlocked,omitempty"`
	FactoryCommand      string       `json:"factoryCommand,omitempty"`
	// UnreadNamespaces and Ignored are pins': namespaces whose pools could
	// not be read, and tenant objects not read as pools.
	UnreadNamespaces []fleet.UnreadNamespace `json:"unreadNamespaces,omitempty"`
	Ignored          []fleet.Ignored         `json:"ignored,omitempty"`
}

// RolloutWave is one wave: pools patched together, waited on together.
type RolloutWave struct {
	Wave  int           `json:"wave"`
	Pools []RolloutPool `json:"pools"`
	// WorkersToReplace adds up the workers its pools replace, and
	// WorkersAtOnce those they replace at once (--max-workers bounds it).
	WorkersToReplace int64 `json:"workersToReplace"`
	WorkersAtOnce    int64 `json:"workersAtOnce"`
	// ClonesInFlight is how many worker disks the wave's clone pools clone
	// at once (each pool's rolling surge), and TransientStorage what those
	// take in cozy-public while they do: CDI makes each clone there first
	// (tmp-pvc-<uid>, the worker disk's request, and with the snapshot
	// strategy a VolumeSnapshot), then moves it to the pool's namespace.
	ClonesInFlight   int64  `json:"clonesInFlight"`
	TransientStorage string `json:"transientStorage"`
	// ClonesPerGolden is ClonesInFlight by golden: many clones of one
	// source are where storage breaks (--max-clones bounds it).
	ClonesPerGolden map[string]int64 `json:"clonesPerGolden,omitempty"`
	// HTTPImports counts the workers that import their image over HTTP as
	// they are replaced: one download each.
	HTTPImports int64 `json:"httpImports"`
	// Alone says why a pool has this wave to itself: rolling already (an
	// earlier run moved it), it alone is above --max-workers or
	// --max-clones, and this run writes nothing to it.
	Alone string `json:"alone,omitempty"`
}

// RolloutPool is one selected pool: where it is, where it goes, what that
// changes in its values and its workers.
type RolloutPool struct {
	// HelmRelease is "<namespace>/<name>" of its HelmRelease, or of its Helm
	// release for a pool installed without one.
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release"`
	Namespace   string `json:"namespace"`
	// Pool is kubernetes-<cluster>-<pool>: its MachineDeployment's name.
	Pool string `json:"pool,omitempty"`
	// State is one of the State* constants; Reason says why a pool is
	// blocked, skipped or waited on, in the chart's words where it refuses.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// From and To are the disk source the chart resolves now and at the
	// target, each part with where the chart took it from.
	From *RolloutFlavor `json:"from,omitempty"`
	To   *RolloutFlavor `json:"to,omitempty"`
	// Changes are the values that change, each at the field the pool's
	// flavor came from, and ValuesChange the same as a JSON merge patch
	// (RFC 7386: null removes a key) of its HelmRelease's spec.values.
	Changes      []ValueChange  `json:"changes,omitempty"`
	ValuesChange map[string]any `json:"valuesChange,omitempty"`
	// MachineTemplate: what the MachineDeployment runs, what the chart
	// renders for the pool now and at the target.
	MachineTemplate RolloutTemplates `json:"machineTemplate"`
	// Workers is the MachineDeployment's replicas (spec.replicas, else
	// status.replicas): the workers the roll replaces.
	Workers int64 `json:"workers"`
	// ToReplace are the workers the move replaces: all of them, or for a
	// pool already rolling, those not yet on the new template.
	ToReplace int64 `json:"toReplace"`
	// RollingUpdate is its MachineDeployment's rolling update once moved
	// (resolved for its workers), and WorkersAtOnce how many of ToReplace
	// it replaces at once by it: maxSurge + maxUnavailable, as Cluster API
	// rolls a MachineDeployment.
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`
	WorkersAtOnce int64          `json:"workersAtOnce"`
	// MachineDeployment: the pool has one.
	MachineDeployment bool `json:"machineDeployment"`
	// ClonesInFlight: the worker disks the pool clones at once as it rolls
	// (WorkersAtOnce on the clone path; 0 on the HTTP path or at zero
	// workers), each DiskSize in cozy-public while CDI clones it.
	ClonesInFlight int64  `json:"clonesInFlight"`
	DiskSize       string `json:"diskSize,omitempty"`
	// Golden and CloneStrategy: what the pool clones at the target, and how
	// CDI clones it, as the chart resolved them.
	Golden        string `json:"golden,omitempty"`
	CloneStrategy string `json:"cloneStrategy,omitempty"`
	// Behind says how the pool is behind what a new pool gets now (Behind),
	// before it moves.
	Behind []report.BehindReason `json:"behind,omitempty"`
	// Generation is the HelmRelease's metadata.generation the plan was made
	// against: the patch applies only while it is still that.
	Generation int64 `json:"generation,omitempty"`
	// UID is the HelmRelease's metadata.uid the plan read: a HelmRelease
	// deleted and created again (generation 1 again) is another object, never
	// patched or waited on as this pool.
	UID string `json:"uid,omitempty"`
	// Note says what else the operator should know (a CA the new URL does
	// not take, a rolling strategy the wait depends on).
	Note string `json:"note,omitempty"`
	// OtherFactory: once moved, the pool imports from another Image Factory
	// than the one new pools get, with the command that moves it there in
	// the same change; nil when it does not (or clones).
	OtherFactory *OtherFactory `json:"otherFactory,omitempty"`

	// ImageURL is the image the pool's new workers import over HTTP once
	// moved ("" when they clone); imageCA the CA the import trusts.
	ImageURL string `json:"imageURL,omitempty"`
	imageCA  string

	// SurgeRestore: the values change writes maxSurge to keep the pool's
	// roll within a bound; after the rollout's last wave, --apply puts the
	// pool's own back. nil when it writes none.
	SurgeRestore *report.SurgeRestore `json:"surgeRestore,omitempty"`

	// SpecValues is the HelmRelease's whole spec.values once changed: what
	// the patch writes.
	SpecValues map[string]any `json:"-"`
	// switched is the chart's report on the disk source at the target; it
	// and the target flavor feed the catalog's entries (catalogFor).
	switched                        *report.DiskReport
	toSchematicID, toVersion, toURL string
}

// TargetKnown says how a rollout's Talos release is known: what names it,
// or the factories asked and what they answered.
type TargetKnown struct {
	// By names what knows the release without asking a factory; "" when a
	// factory was asked.
	By string `json:"by,omitempty"`
	// Asked are the factories' version lists asked (GET <factory>/versions),
	// each with the CA it was trusted with.
	Asked []string `json:"asked,omitempty"`
}

// OtherFactory says that a pool will import from another Image Factory
// than the one new pools get, and how to move it there in the same change.
type OtherFactory struct {
	// ImageFactoryURL is the factory the pool imports from once moved.
	ImageFactoryURL string `json:"imageFactoryURL"`
	// Published is the factory URL new pools get, and PublishedFrom where
	// the chart takes it from: _cluster.talos.imageFactoryURL, the catalog's
	// published defaults (CatalogChannel), or the chart's built-in default.
	Published     string `json:"published"`
	PublishedFrom string `json:"publishedFrom"`
	// PublishedCA: a CA comes with the published factory (talos.imageFactoryCA
	// in the same place), so the command writes it with the URL: a pool's
	// own URL takes no CA of the platform's.
	PublishedCA bool `json:"publishedCA,omitempty"`
	// Blocks: the catalog publishes the factory (its published defaults),
	// so the network's new pools import from it, and the pool is blocked.
	Blocks bool `json:"blocks,omitempty"`
	// Command is this rollout's selection and target with --to-factory (and
	// --factory-ca) added: the flavor and the factory in one re-image.
	Command string `json:"command"`
}

// RolloutFlavor is a pool's disk source as the chart resolves it.
type RolloutFlavor struct {
	// Path is clone or http.
	Path            string          `json:"path"`
	SchematicID     report.Sourced  `json:"schematicID"`
	Version         report.Sourced  `json:"version"`
	ImageFactoryURL *report.Sourced `json:"imageFactoryURL,omitempty"`
	Golden          string          `json:"golden,omitempty"`
}

// ValueChange is one value a rollout writes in a pool's spec.values.
type ValueChange struct {
	// Field is its path in the values (talos.version, osImage.builtin.version).
	Field string `json:"field"`
	// From is what the pool resolves today, and Source where the chart took
	// it from (another field, a default, a platform default recorded at
	// creation); To what the field is set to ("" with Removed).
	From    string `json:"from,omitempty"`
	Source  string `json:"source,omitempty"`
	To      string `json:"to,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// RolloutTemplates are a pool's KubevirtMachineTemplate names.
type RolloutTemplates struct {
	// Running is what its MachineDeployment runs (spec.template.spec.infrastructureRef).
	Running string `json:"running,omitempty"`
	// Current and Target are what the chart renders for its values now and
	// at the target ("" where it refuses).
	Current string `json:"current,omitempty"`
	Target  string `json:"target,omitempty"`
}

// Pools are every wave's pools, in order.
func (p *RolloutPlan) Pools() []RolloutPool {
	var out []RolloutPool
	for _, w := range p.Waves {
		out = append(out, w.Pools...)
	}
	return out
}

// Event kinds of a rollout under way, in the order they come.
const (
	EventPlan     = "plan"     // the plan (JSON only: text prints the plan first)
	EventWave     = "wave"     // a wave starts
	EventPatched  = "patched"  // a pool's HelmRelease spec.values was patched
	EventProgress = "progress" // a pool's HelmRelease or MachineDeployment moved on
	EventReady    = "ready"    // a pool is on the target: HelmRelease Ready, every worker updated
	EventWaveDone = "wave-done"
	EventFailed   = "failed"  // a pool failed, or a wave timed out: the rollout stops
	EventStopped  = "stopped" // the rollout stopped before the end (after a failure, or interrupted)
	EventDone     = "done"    // every wave is done
	// EventImagesChecked: before wave 1's first patch, each image its HTTP
	// pools import was found on its factory.
	EventImagesChecked = "images-checked"
	// EventSurgeRestored: after the last wave, a pool's own maxSurge was put
	// back (the rolling update only: nothing rolls).
	EventSurgeRestored = "surge-restored"
	// EventRecord: the rollout's record was written whole (created again
	// with every write of this run after it was deleted, or written over a
	// ConfigMap that was not this target's record).
	EventRecord = "record"
)

// RolloutEvent is one step of a rollout under way.
type RolloutEvent struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Wave and Waves: which wave, of how many.
	Wave  int `json:"wave,omitempty"`
	Waves int `json:"waves,omitempty"`
	// Pool is the pool's HelmRelease, "<namespace>/<name>".
	Pool string `json:"pool,omitempty"`
	// Message says it in a line, as text output prints it.
	Message string `json:"message"`
	// Generation is the HelmRelease generation the pool must be Ready at.
	Generation int64 `json:"generation,omitempty"`
	// Status is where a pool is, read from the cluster (progress, ready,
	// failed).
	Status *RolloutStatus `json:"status,omitempty"`
	// Pools are the pools a wave holds (wave), or those of the stopped
	// wave not done yet, still rolling in the cluster (stopped).
	Pools []string `json:"pools,omitempty"`
	// Elapsed is the time since the wave started (per pool and wave events),
	// or since the rollout started (done, stopped), in seconds.
	Elapsed float64 `json:"elapsedSeconds,omitempty"`
	// Plan is the plan (plan event).
	Plan *RolloutPlan `json:"plan,omitempty"`
}

// RolloutStatus is what a pool's HelmRelease and MachineDeployment say.
type RolloutStatus struct {
	// HelmRelease says where Flux is: ready, in progress, failed, and why.
	HelmRelease      string `json:"helmRelease"`
	HelmReleaseReady bool   `json:"helmReleaseReady"`
	// MachineDeployment says where Cluster API is; Template is what it
	// runs, and the counts are its status's.
	MachineDeployment string `json:"machineDeployment"`
	Template          string `json:"machineTemplate,omitempty"`
	Replicas          int64  `json:"replicas"`
	UpdatedReplicas   int64  `json:"updatedReplicas"`
	ReadyReplicas     int64  `json:"readyReplicas"`
	RolledOut         bool   `json:"rolledOut"`
	// Failed says why the pool will not get there by waiting.
	Failed string `json:"failed,omitempty"`
}

// Done: the pool is on the target.
func (s RolloutStatus) Done() bool { return s.HelmReleaseReady && s.RolledOut }

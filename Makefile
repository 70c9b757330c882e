# Every target needs only Go; the Helm CLI is built from the module proxy, once,
# into bin/ (its file name carries the pinned version, so a new pin rebuilds it).
GO ?= go
BIN := bin
HELM_VERSION := v3.21.4
HELM_BIN := $(BIN)/helm-$(HELM_VERSION)
HELM ?= $(CURDIR)/$(HELM_BIN)

CHARTS := packages/library/worker-image-lib packages/library/kubernetes-nodes-lib packages/apps/kubernetes-nodes packages/system/kubernetes-worker-image packages/core/platform packages/system/kubernetes-nodes-rd

.PHONY: generate test unit talos integration apiserver kubectl promtool kube-state-metrics helm-controller tools render lint golden bench vet package push monitoring-agents grafana-dashboard
.PHONY: cluster-api

## generate: write what the build derives into the charts: the kubernetes-nodes-rd
## chart's openAPISchema is the pool chart's values.schema.json (tests/render
## fails when the two drift).
generate:
	$(GO) run ./internal/rdschema/gen

## test: the whole Go suite (render, schema, CLI) and the real API server tier.
test: unit integration

## unit: the fast suite alone (no API server), with the Talos patch check,
## Prometheus's promtool over the catalog's alert rules (tests/monitoring) and
## Helm v4.1 (tools/helm-v4.1), under which tests/render renders every golden
## case, the corners chart and the refusals again, as under the newest v4.
unit: talos promtool helm-v4.1
	PROMTOOL=$(abspath $(PROMTOOL_BIN))/promtool HELM_V4_1=$(abspath $(HELMV41_BIN))/helm-v4.1 $(GO) test ./...

## talos: Talos's own config patcher applies every golden pool's machine-config
## patch; tests/talos is its own module, so Talos never enters go.mod.
talos:
	cd tests/talos && $(GO) test ./...

## integration: the charts installed for real against kube-apiserver + etcd,
## kube-state-metrics reading what they create, and the pool's reconcile step
## run with kubectl against it, promtool evaluating the alert rules over
## what kube-state-metrics exported, and Flux's helm-controller reconciling
## a pool's HelmRelease as Cozystack writes it.
integration: apiserver kubectl kube-state-metrics promtool helm-controller helm-v4.1
	KUBE_APISERVER_BIN_DIR=$(CURDIR)/$(APISERVER_BIN) KUBECTL=$(CURDIR)/$(BIN)/kubectl KUBE_STATE_METRICS=$(abspath $(KSM_BIN))/kube-state-metrics PROMTOOL=$(abspath $(PROMTOOL_BIN))/promtool HELM_CONTROLLER=$(abspath $(HC_BIN))/helm-controller HELM_V4_1=$(abspath $(HELMV41_BIN))/helm-v4.1 $(GO) test -tags integration -count=1 -v -timeout 30m ./tests/integration/...

# kube-apiserver and etcd are built from tools/apiserver (its own go.mod, so
# k8s.io/kubernetes never enters the project's module graph) once, then reused.
APISERVER_BIN := .cache/apiserver/bin
KUBE_VERSION := v1.36.3
# Without these stamps the server reports an unparsable version.
KUBE_LDFLAGS := -s -w \
	$(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version, \
		-X $(p).gitVersion=$(KUBE_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=36 -X $(p).gitTreeState=clean)

## apiserver: build kube-apiserver and etcd into .cache/apiserver/bin (once).
apiserver: $(APISERVER_BIN)/kube-apiserver $(APISERVER_BIN)/etcd

$(APISERVER_BIN)/kube-apiserver: tools/apiserver/go.mod
	@mkdir -p $(@D)
	cd tools/apiserver && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(CURDIR)/$@.tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $@.tmp $@

$(APISERVER_BIN)/etcd: tools/apiserver/go.mod
	@mkdir -p $(@D)
	cd tools/apiserver && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(CURDIR)/$@.tmp go.etcd.io/etcd/server/v3
	mv $@.tmp $@

# The software that consumes what the charts render for monitoring, each built
# from its own tools/ module (so neither enters the project's go.mod) once into
# .cache, then reused: Prometheus's promtool checks and unit-tests the alert
# rules; kube-state-metrics runs in the tier with the platform's configuration.
# Their versions are the ones their go.mod pins.
PROMTOOL_BIN ?= .cache/promtool/bin
KSM_BIN ?= .cache/kube-state-metrics/bin
HC_BIN ?= .cache/helm-controller/bin
HELMV41_BIN ?= .cache/helm-v4.1/bin

## tools: build promtool, kube-state-metrics, helm-controller and Helm v4.1's renderer (once).
tools: promtool kube-state-metrics helm-controller helm-v4.1

## promtool: build Prometheus's promtool into .cache/promtool/bin (once), with
## Prometheus's own remove_all_sd tag: checking rules needs no service discovery,
## and leaving the cloud SDKs out builds it in a fraction of the time.
promtool: $(PROMTOOL_BIN)/promtool

$(PROMTOOL_BIN)/promtool: tools/promtool/go.mod
	@mkdir -p $(@D)
	cd tools/promtool && CGO_ENABLED=0 $(GO) build -tags remove_all_sd -trimpath \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$$($(GO) list -m -f '{{.Version}}' github.com/prometheus/prometheus)" \
		-o $(abspath $@).tmp github.com/prometheus/prometheus/cmd/promtool
	mv $@.tmp $@

## kube-state-metrics: build kube-state-metrics into .cache/kube-state-metrics/bin (once).
kube-state-metrics: $(KSM_BIN)/kube-state-metrics

$(KSM_BIN)/kube-state-metrics: tools/kube-state-metrics/go.mod
	@mkdir -p $(@D)
	cd tools/kube-state-metrics && CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$$($(GO) list -m -f '{{.Version}}' k8s.io/kube-state-metrics/v2)" \
		-o $(abspath $@).tmp k8s.io/kube-state-metrics/v2
	mv $@.tmp $@

# The Cluster API core manager, built from tools/cluster-api (its own go.mod:
# Cluster API pins its own controller-runtime and Kubernetes) once into .cache;
# the tier runs it against its kube-apiserver. Its version is the one go.mod pins.
CAPI_BIN ?= .cache/cluster-api/bin

## cluster-api: build the Cluster API core manager into .cache/cluster-api/bin (once).
cluster-api: $(CAPI_BIN)/cluster-api

# TestPlatformControllers runs that manager, with helm-controller (it skips, saying so, without CLUSTER_API).
integration: cluster-api
integration: export CLUSTER_API := $(abspath $(CAPI_BIN))/cluster-api

$(CAPI_BIN)/cluster-api: tools/cluster-api/go.mod
	@mkdir -p $(@D)
	cd tools/cluster-api && CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$$($(GO) list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)" \
		-o $(abspath $@).tmp sigs.k8s.io/cluster-api
	mv $@.tmp $@

# The boot path's controllers, each from its own tools/ module (its own go.mod:
# each pins its own Kubernetes, controller-runtime and Cluster API) once into
# .cache, at the version its go.mod pins: CDI's controller (v1.64.0), Cluster
# API's KubeVirt provider (v0.1.10) and the Talos bootstrap provider (v0.6.12),
# the releases Cozystack runs. TestPlatformControllers runs the KubeVirt
# provider (it skips, saying so, without CLUSTER_API_PROVIDER_KUBEVIRT) and the
# Talos bootstrap provider; TestCDIClone runs CDI's, and its BootPath all
# three beside it with Cluster API and helm-controller.
CDI_BIN ?= .cache/cdi/bin
CAPK_BIN ?= .cache/cluster-api-provider-kubevirt/bin
CABPT_BIN ?= .cache/cluster-api-bootstrap-provider-talos/bin

integration: cluster-api-provider-kubevirt
integration: export CLUSTER_API_PROVIDER_KUBEVIRT := $(abspath $(CAPK_BIN))/cluster-api-provider-kubevirt

.PHONY: cdi cluster-api-provider-kubevirt cluster-api-bootstrap-provider-talos boot-path-controllers

## boot-path-controllers: build the controllers below (once each).
boot-path-controllers: cdi cluster-api-provider-kubevirt cluster-api-bootstrap-provider-talos

## cdi: build CDI's controller (cmd/cdi-controller) and the clone-token signer
## (tools/cdi/clonetoken, CDI's own pkg/token) into .cache/cdi/bin (once).
cdi: $(CDI_BIN)/cdi-controller $(CDI_BIN)/cdi-clone-token

# TestCDIClone runs that controller (it skips, saying so, without CDI_CONTROLLER).
integration: cdi
integration: export CDI_CONTROLLER := $(abspath $(CDI_BIN))/cdi-controller

$(CDI_BIN)/cdi-clone-token: tools/cdi/go.mod tools/cdi/clonetoken/main.go
	@mkdir -p $(@D)
	cd tools/cdi && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(abspath $@).tmp ./clonetoken
	mv $@.tmp $@

$(CDI_BIN)/cdi-controller: tools/cdi/go.mod
	@mkdir -p $(@D)
	cd tools/cdi && CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags "-s -w -X kubevirt.io/containerized-data-importer/pkg/version.gitVersion=$$($(GO) list -m -f '{{.Version}}' kubevirt.io/containerized-data-importer)" \
		-o $(abspath $@).tmp kubevirt.io/containerized-data-importer/cmd/cdi-controller
	mv $@.tmp $@

## cluster-api-provider-kubevirt: build the KubeVirt provider's manager into
## .cache/cluster-api-provider-kubevirt/bin (once).
cluster-api-provider-kubevirt: $(CAPK_BIN)/cluster-api-provider-kubevirt

$(CAPK_BIN)/cluster-api-provider-kubevirt: tools/cluster-api-provider-kubevirt/go.mod
	@mkdir -p $(@D)
	cd tools/cluster-api-provider-kubevirt && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' \
		-o $(abspath $@).tmp sigs.k8s.io/cluster-api-provider-kubevirt
	mv $@.tmp $@

## cluster-api-bootstrap-provider-talos: build the Talos bootstrap provider's
## manager into .cache/cluster-api-bootstrap-provider-talos/bin (once).
cluster-api-bootstrap-provider-talos: $(CABPT_BIN)/cluster-api-bootstrap-provider-talos

# TestPlatformControllers runs it (and fails, saying so, without CABPT).
integration: cluster-api-bootstrap-provider-talos
integration: export CABPT := $(abspath $(CABPT_BIN))/cluster-api-bootstrap-provider-talos

$(CABPT_BIN)/cluster-api-bootstrap-provider-talos: tools/cluster-api-bootstrap-provider-talos/go.mod
	@mkdir -p $(@D)
	cd tools/cluster-api-bootstrap-provider-talos && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' \
		-o $(abspath $@).tmp github.com/siderolabs/cluster-api-bootstrap-provider-talos
	mv $@.tmp $@

## helm-controller: build Flux's helm-controller into .cache/helm-controller/bin
## (once); the tier runs it against its kube-apiserver, as the platform runs it.
helm-controller: $(HC_BIN)/helm-controller

$(HC_BIN)/helm-controller: tools/helm-controller/go.mod
	@mkdir -p $(@D)
	cd tools/helm-controller && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' \
		-o $(abspath $@).tmp github.com/fluxcd/helm-controller
	mv $@.tmp $@

## helm-v4.1: build tools/helm-v4.1 into .cache/helm-v4.1/bin (once): it
## renders a chart with Helm v4.1, the Helm Cozystack's helm-controller v1.5.0
## links (go.mod holds the newest v4, and one module holds one v4), for the
## tests that compare Helm v3, v4.1 and the newest v4 byte for byte.
.PHONY: helm-v4.1
helm-v4.1: $(HELMV41_BIN)/helm-v4.1

$(HELMV41_BIN)/helm-v4.1: tools/helm-v4.1/go.mod tools/helm-v4.1/main.go
	@mkdir -p $(@D)
	cd tools/helm-v4.1 && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(abspath $@).tmp .
	mv $@.tmp $@

## kubectl: build kubectl into bin/ from the Kubernetes module tools/apiserver
## builds the server from (same release); the tier runs the pool's reconcile
## Job's script with it.
kubectl: $(BIN)/kubectl

$(BIN)/kubectl: tools/apiserver/go.mod tools/apiserver/go.sum
	@mkdir -p $(@D)
	cd tools/apiserver && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(CURDIR)/$@.tmp k8s.io/kubernetes/cmd/kubectl
	mv $@.tmp $@

## package: every chart, the library charts included, as `helm package` builds
## it (a library linked into charts/ goes into the archive): DIST/<name>-<version>.tgz,
## one line each. DIST's archives are removed first, so it holds exactly this
## checkout's charts (a release keeps its own: make package DIST=releases/<version>).
## Helm's output is shown only when it fails: its one warning, for each linked
## library, says it followed the link, which is how the library gets in.
DIST ?= dist
package: $(HELM_BIN)
	@mkdir -p $(DIST) && rm -f $(DIST)/*.tgz
	@for c in $(CHARTS); do \
		out=$$($(HELM) package $$c -d $(DIST) 2>&1) || { echo "$$out" >&2; exit 1; }; \
		echo "$$out" | sed -n 's/^Successfully packaged chart and saved it to: //p'; \
	done

## monitoring-agents: the Package cozystack.monitoring-agents with the goldens' metrics,
## for a stock Cozystack that runs without this repository's platform chart
## (docs/monitoring.md): the platform chart's own render with its metrics switch on,
## so what an operator applies is byte for byte what the platform writes. Helm's
## output is shown only when it fails (its one warning says it followed the library link).
monitoring-agents: $(HELM_BIN)
	@tmp=$$(mktemp) && trap 'rm -f "$$tmp"' EXIT && \
		out=$$($(HELM) template platform packages/core/platform --set kubernetesWorkerImage.metrics.enabled=true --show-only templates/monitoring-agents.yaml 2>&1 >"$$tmp") || { echo "$$out" >&2; exit 1; }; \
		cat "$$tmp"

## grafana-dashboard: every dashboard under dashboards/<folder>/<name>.json as the
## GrafanaDashboard a stock Cozystack's Grafana takes (docs/monitoring.md): in
## tenant-root for the instances labelled dashboards: grafana, named <folder>-<name>
## in folder <folder> as Cozystack names its own, the committed JSON inline as it is
## (a YAML literal block: the file's bytes, indented).
grafana-dashboard:
	@for f in dashboards/*/*.json; do \
		folder=$$(basename $$(dirname $$f)) && name=$$(basename $$f .json) && \
		echo '---' && \
		printf 'apiVersion: grafana.integreatly.org/v1beta1\nkind: GrafanaDashboard\nmetadata:\n  name: %s-%s\n  namespace: tenant-root\nspec:\n  folder: %s\n  instanceSelector:\n    matchLabels:\n      dashboards: grafana\n  json: |\n' "$$folder" "$$name" "$$folder" && \
		sed 's/^/    /' "$$f" || exit 1; \
	done

## push: push every archive in DIST to REGISTRY (oci://HOST[:PORT]/PATH) with Helm's
## own registry client, as `helm push` does: REGISTRY/<name>:<version> for each.
## Credentials are Helm's (helm registry login); PUSH_FLAGS passes helm push flags
## (--plain-http for a registry without TLS, --ca-file, ...). It pushes what is in
## DIST and builds nothing: `make package` first, or DIST=releases/<version> to
## push a release's archives as they were kept.
REGISTRY ?=
PUSH_FLAGS ?=
push: $(HELM_BIN)
	@case "$(REGISTRY)" in oci://?*) ;; *) echo "make push: give REGISTRY=oci://HOST[:PORT]/PATH (got \"$(REGISTRY)\")" >&2; exit 2;; esac
	@set -- $(DIST)/*.tgz; [ -f "$$1" ] || { echo "make push: no chart archive in $(DIST)/: run make package first" >&2; exit 2; }; \
	for a in "$$@"; do $(HELM) push $(PUSH_FLAGS) "$$a" $(REGISTRY) || exit 1; done

# Silent when it works (make package prints only its archives); a temporary
# GOBIN, so two builds at once never see half a binary.
# Go's download lines are shown only when the build fails: the first target
# that needs Helm prints what it does, not how Helm got built.
$(HELM_BIN):
	@mkdir -p $(BIN) && tmp=$$(mktemp -d $(BIN)/.helm-XXXXXX) && \
		{ out=$$(GOBIN=$(CURDIR)/$$tmp $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION) 2>&1) || { echo "$$out" >&2; rm -rf $$tmp; exit 1; }; } && \
		mv $$tmp/helm $@ && rmdir $$tmp

## render: `workerimage plan` (its text report) for every example pool against
## the example cluster, a stock Cozystack after the takeover
## (examples/cluster-state.yaml; examples/platform/cluster-state.yaml is the
## _cluster one). A refused pool reports its refusal and exits 1, which
## examples do on purpose; bad input (exit 2) fails the target.
render: $(BIN)/workerimage
	@for f in examples/pools/*.yaml; do \
		echo "### $$f"; \
		$(BIN)/workerimage plan -f $$f --cluster examples/cluster-state.yaml; \
		rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
		echo; \
	done

$(BIN)/workerimage: FORCE
	$(GO) build -trimpath -o $@ ./cmd/workerimage

## lint: helm lint --strict on every chart that exists (the pinned Helm CLI), plus go vet and gofmt.
lint: vet $(HELM_BIN)
	@for c in $(CHARTS); do \
		[ -d $$c ] || continue; \
		$(HELM) lint --strict $$c $$( [ -f $$c/ci/lint-values.yaml ] && echo -f $$c/ci/lint-values.yaml ) || exit 1; \
	done

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./tests/integration/...
	cd tools/crds && $(GO) vet ./...
	cd tools/registry && $(GO) vet ./...
	cd tools/helm-v4.1 && $(GO) vet ./...
	cd tools/cdi && $(GO) vet ./clonetoken
	cd tests/talos && $(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); [ -z "$$out" ] || { echo "gofmt would change: $$out"; exit 1; }

## golden: deliberately rewrite every committed golden file (the renders in
## tests/render and the rendered objects of examples/cluster-state.yaml, the
## CLI's reports in cmd/workerimage): -update is defined once, in
## tests/support, for every test binary that links it.
GOLDEN_PKGS := ./tests/render ./cmd/workerimage
golden:
	$(GO) test $(GOLDEN_PKGS) -update

## bench: render benchmarks (each chart schema's worst lists on against off among
## them), what a fleet report reads and what one costly tenant object adds to pins,
## planning a rollout over 105, 1,001 and 5,005 pools (BenchmarkRolloutPlan, once each: tens of minutes),
## then what an unchanged `helm upgrade` costs a pool on
## the real API server (BenchmarkUpgradeCost; skipped, saying so, while kube-apiserver
## and etcd are not built: `make apiserver`, or point KUBE_APISERVER_BIN_DIR at them),
## each against Cozystack's own pool chart where COZYSTACK_CHART names its folder
## (the pre-feature chart; left out, saying so, without it).
## -v: the benchmark's log holds its breakdown tables.
KUBE_APISERVER_BIN_DIR ?= $(CURDIR)/$(APISERVER_BIN)
bench:
	$(GO) test ./tests/render -run '^$$' -bench . -benchmem
	$(GO) test ./internal/fleet ./internal/report -run '^$$' -bench . -skip BenchmarkRolloutPlan -benchmem -benchtime 5x
	$(GO) test ./internal/rollout -run '^$$' -bench BenchmarkRolloutPlan -benchtime 1x -timeout 60m
	KUBE_APISERVER_BIN_DIR=$(KUBE_APISERVER_BIN_DIR) $(GO) test -tags integration ./tests/integration/ -run '^$$' -bench BenchmarkUpgradeCost -v -timeout 30m

.PHONY: FORCE
FORCE:

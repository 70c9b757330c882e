# Every target needs only Go; the Helm CLI is built from the module proxy.
HELM ?= go run helm.sh/helm/v3/cmd/helm@v3.21.4
GO ?= go
BIN := bin

CHARTS := packages/apps/kubernetes-nodes packages/system/kubernetes-worker-image packages/core/platform

.PHONY: test render lint golden bench vet

## test: the whole Go suite (render, schema, CLI).
test:
	$(GO) test ./...

## render: `workerimage plan` (its text report) for every example pool against
## the example cluster state. A refused pool reports its refusal and exits 1,
## which examples do on purpose; bad input (exit 2) fails the target.
render: $(BIN)/workerimage
	@for f in examples/pools/*.yaml; do \
		echo "### $$f"; \
		$(BIN)/workerimage plan -values $$f -cluster examples/cluster-state.yaml; \
		rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
		echo; \
	done

$(BIN)/workerimage: FORCE
	$(GO) build -o $@ ./cmd/workerimage

## lint: helm lint --strict on every chart that exists, plus go vet and gofmt.
lint: vet
	@for c in $(CHARTS); do \
		[ -d $$c ] || continue; \
		$(HELM) lint --strict $$c $$( [ -f $$c/ci/lint-values.yaml ] && echo -f $$c/ci/lint-values.yaml ) || exit 1; \
	done

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); [ -z "$$out" ] || { echo "gofmt would change: $$out"; exit 1; }

## golden: deliberately rewrite the committed pre-feature baseline renders.
golden:
	$(GO) test ./tests/render -run 'TestBaselineRendersAreByteIdentical' -update

## bench: render benchmarks.
bench:
	$(GO) test ./tests/render -run '^$$' -bench . -benchmem

.PHONY: FORCE
FORCE:

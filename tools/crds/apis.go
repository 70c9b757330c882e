//go:build tools

package main

// The upstream API packages controller-gen reads from the module cache. They
// are named here, behind a build tag, so that go.mod pins their versions; the
// command itself never links them (controller-gen parses and type-checks their
// source).
import (
	_ "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	_ "github.com/fluxcd/helm-controller/api/v2"
	_ "github.com/fluxcd/source-controller/api/v1"
	_ "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	_ "kubevirt.io/api/instancetype/v1beta1"
	_ "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	_ "kubevirt.io/containerized-data-importer-api/pkg/apis/forklift/v1beta1"
)

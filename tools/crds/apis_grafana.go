//go:build tools

package main

// grafana-operator's API package, pinned by go.mod like those in apis.go.
import _ "github.com/grafana/grafana-operator/v5/api/v1beta1"

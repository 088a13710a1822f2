//go:build e2e

// Package e2e proves against a real kube-apiserver what the fixture tests can
// only assert: that every child and every status stackdome returns is
// accepted and stored exactly as sent (otherwise Metacontroller updates it on
// every sync), that the CRD rejects invalid specs at admission, and that the
// chart installs and refuses a cluster without its prerequisites. What runs
// pods (Metacontroller, Traefik, stackdome, apps) is e2e/node's.
//
// framework.TestMain starts one loopback control plane (etcd,
// kube-apiserver, kube-controller-manager) for the whole package with
// Traefik's and Metacontroller's CRDs, and stops it whatever happens; each
// test reaches it through framework.NewFixture(t). No kubelet, no
// Metacontroller process, no network namespace: the package needs no root.
// Run it with `make e2e`.
package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

func TestMain(m *testing.M) { framework.TestMain(m) }

// obj is a JSON object as the API client decodes it.
type obj = framework.Obj

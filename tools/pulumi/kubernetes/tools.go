//go:build tools

// helm is built from this module too (runtime/realinfra/build.ts, component helm): the provider links the same
// helm release, so with one build list the two builds share every compiled package they have in common (helm's
// own wrapper module selected other versions of golang.org/x/*, grpc and others, which left nothing to share).
package main

import _ "helm.sh/helm/v3/cmd/helm"

// Package deploy holds no code: its tests check the deployment files
// against the zen binary. They render the Kubernetes overlays in ../k8s
// with kustomize, decode every object strictly with the Kubernetes API
// types, and check that ports, probes, variables and addresses agree with
// what zen serves and reads; they check deploy/compose.yaml the same way,
// and build the binary as deploy/Dockerfile does.
package deploy

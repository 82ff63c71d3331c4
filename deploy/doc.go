// Package deploy holds weft's deployment files — the container image
// (Dockerfile), a compose file for a three-node NATS cluster with two weft
// nodes and two tool workers (compose.yaml), and Kubernetes manifests
// (k8s/) — and the tests that check them against the code: every manifest
// parses, uses the image the Dockerfile documents, runs weft subcommands
// with flags the CLI accepts (asked of the built CLI), sets only
// environment variables weft reads, and the NATS configurations parse as
// nats-server configuration with JetStream and three routes. See README.md.
package deploy

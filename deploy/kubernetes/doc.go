// Package kubernetes holds tokenpulse's Kubernetes manifests for a
// sharded run (an Indexed Job of `tokenpulse bench --shards N`, a shared
// volume, and a Job that waits for the shards and runs `tokenpulse
// merge`), parameterised by params.env and rendered by render.sh. Its
// test decodes every manifest strictly into the Kubernetes API types, so
// that a misspelt field fails.
package kubernetes

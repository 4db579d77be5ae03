#!/bin/sh
# render.sh PARAMS.env: print the manifests with the parameters of
# PARAMS.env (see params.env) substituted, for kubectl apply -f -.
# Only the variables PARAMS.env names are substituted ($JOB_COMPLETION_INDEX
# and the shell's own stay for the pods).
set -eu
params=${1:?usage: render.sh PARAMS.env}
dir=$(dirname "$0")
case $params in */*) ;; *) params=./$params ;; esac
set -a
. "$params"
set +a
vars=$(grep -E '^[A-Z0-9_]+=' "$params" | cut -d= -f1 | sed 's/^/${/; s/$/}/' | tr '\n' ' ')
for f in pvc.yaml shards-job.yaml merge-job.yaml; do
	echo "---"
	envsubst "$vars" < "$dir/$f"
done

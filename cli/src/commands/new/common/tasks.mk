
# The embedded API server with the CRD and the example applied, the module
# reconciling it. Try: KUBECONFIG=build/kubeconfig kubectl get {{plural}}
dev: build
	$(REKON) dev $(WASM) -f manifests/example.yaml --write-kubeconfig build/kubeconfig

# The ConfigMaps that ship the module to a cluster.
pack: build
	$(REKON) pack $(WASM) --name $(NAME) > build/$(NAME).configmaps.yaml
	@echo "kubectl apply --server-side -f build/$(NAME).configmaps.yaml"

# manifests/crd.yaml, from the module.
crd: build

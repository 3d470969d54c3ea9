package fleetgraph_test

import "os"

func readDemo() ([]byte, error) {
	return os.ReadFile("../../shared/compat/pacto-demo/fleet-targets.yaml")
}

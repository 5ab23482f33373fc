package openshell

import "slices"

// ControlPlanePort reports whether OpenShell's destination check refuses
// port whatever the policy says (BLOCKED_CONTROL_PLANE_PORTS,
// crates/openshell-supervisor-network/src/proxy.rs:4107@v0.0.111, :2828@v0.0.83: etcd 2379 and
// 2380, the Kubernetes API 6443, the kubelet 10250 and 10255;
// checked at proxy.rs:3713,3901,3941@v0.0.111).
// `policy suggest` uses it to refuse such denials instead of suggesting a
// grant that could never work.
func ControlPlanePort(port int) bool {
	return slices.Contains(controlPlanePorts, int64(port))
}

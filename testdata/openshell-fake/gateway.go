package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The gateway, its registration with the CLI and `openshell status`, as
// NVIDIA/OpenShell has them at v0.0.83 and v0.0.111:
//
//   - openshell-gateway listens on --bind-address (127.0.0.1) and --port
//     (DEFAULT_SERVER_PORT 17670; env OPENSHELL_SERVER_PORT):
//     crates/openshell-server/src/cli.rs v0.0.83:56-61, v0.0.111:59-64;
//     crates/openshell-core/src/config.rs:29 at both tags.
//   - It needs exactly one compute driver: --drivers/--driver or
//     OPENSHELL_DRIVERS (cli.rs v0.0.83:97-112, v0.0.111:100-115), else it
//     auto-detects KUBERNETES_SERVICE_HOST -> a responding Podman socket
//     (OPENSHELL_PODMAN_SOCKET, $XDG_RUNTIME_DIR/podman/podman.sock, ...) ->
//     a Docker socket (config.rs detect_driver v0.0.83:155, v0.0.111:192-209,
//     podman candidates v0.0.111:222-266, docker v0.0.111:277-300) and, when
//     none answers, exits "no compute driver configured and auto-detection
//     found no suitable driver" (crates/openshell-server/src/lib.rs
//     v0.0.83:847, v0.0.111:1256).
//   - TLS: --tls-cert and --tls-key are required unless --disable-tls
//     (OPENSHELL_DISABLE_TLS): cli.rs v0.0.83:77-82,128,286;
//     v0.0.111:80-85,132,299-308 ("--tls-cert is required when TLS is
//     enabled (use --disable-tls to skip)").
//   - --config FILE (OPENSHELL_GATEWAY_CONFIG) is a TOML file rooted at
//     [openshell]; [openshell.gateway] supervisor_image is inherited by the
//     driver tables (crates/openshell-server/src/config_file.rs
//     v0.0.83:115, v0.0.111:138; cli.rs v0.0.111:50-56).
//   - The CLI talks only to a gateway it knows: `gateway add ENDPOINT
//     [--name N] [--local|--remote D]` (main.rs v0.0.83:1024, v0.0.111:1121-1157;
//     an http:// endpoint stores a plaintext registration) or
//     --gateway-endpoint / OPENSHELL_GATEWAY_ENDPOINT (main.rs v0.0.83:411,
//     v0.0.111:443); resolve_gateway main.rs:78 at both tags.
//   - `status` with no gateway resolved prints "No gateway configured." and
//     exits 0 (`-o json`: {"status":"not_configured"}): main.rs
//     v0.0.83:2090-2105, v0.0.111:2360-2385. With one registered, the gRPC
//     health call failing falls back to an HTTP health check whose
//     connection error is propagated with `?`: exit 1, no table
//     (crates/openshell-cli/src/commands/gateway.rs v0.0.111:52-110; run.rs
//     gateway_status v0.0.83:530).
//
// The fake gateway really listens on its TCP port, so "registered but
// refusing connections" is a real connection refused. As `podman` (a copy
// of this binary with that name) `podman system service --time=0
// unix://PATH` listens on PATH, standing in for the Podman API socket.

// registration is a `gateway add`: STATE/gateway.json.
type registration struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Local    bool   `json:"local"`
}

func (f *fake) regPath() string { return filepath.Join(f.state, "gateway.json") }

// endpoint resolves the gateway as resolve_gateway does: the environment
// variable wins over the registration. ok is false when none is configured.
func (f *fake) endpoint() (string, bool) {
	if e := os.Getenv("OPENSHELL_GATEWAY_ENDPOINT"); e != "" {
		return e, true
	}
	if os.Getenv("OPENSHELL_FAKE_GATEWAY") == "up" {
		return "http://127.0.0.1:17670", true
	}
	b, err := os.ReadFile(f.regPath())
	if err != nil {
		return "", false
	}
	var r registration
	if json.Unmarshal(b, &r) != nil || r.Endpoint == "" {
		return "", false
	}
	return r.Endpoint, true
}

// gatewayUp reports whether the resolved gateway answers: a TCP connect to
// its endpoint. OPENSHELL_FAKE_GATEWAY=up stands for a healthy gateway
// without a listener (most runner tests); gateway-down overrides both.
func (f *fake) gatewayUp() bool {
	if _, ok := f.fails["gateway-down"]; ok {
		return false
	}
	if os.Getenv("OPENSHELL_FAKE_GATEWAY") == "up" {
		return true
	}
	ep, ok := f.endpoint()
	if !ok {
		return false
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return false
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	// A plaintext registration against a TLS gateway (or the reverse)
	// fails the handshake: the fake gateway writes its scheme.
	if b, err := os.ReadFile(filepath.Join(f.state, "gateway-scheme")); err == nil && strings.TrimSpace(string(b)) != u.Scheme {
		return false
	}
	return true
}

// requireGateway is the connection every gateway-backed command makes.
func (f *fake) requireGateway() int {
	ep, ok := f.endpoint()
	if !ok {
		return fail(1, "No active gateway. Register one with: openshell gateway add <endpoint>")
	}
	if !f.gatewayUp() {
		return fail(1, "failed to connect to gateway at %s: transport error: Connection refused (os error 111) (openshell-fake)", ep)
	}
	return 0
}

// status follows main.rs/gateway_status (see above): exit 0 when nothing is
// configured or the gateway answers, exit 1 when a registered one does not.
func (f *fake) status(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"-o": true, "--output": true}, 0)
	if code != 0 {
		return code
	}
	out := fl.value("-o", "--output")
	if out != "" && !f.atLeast(0, 0, 92) {
		return fail(2, "unexpected argument '-o' found")
	}
	ep, ok := f.endpoint()
	if !ok {
		if out == "json" {
			fmt.Println(`{"status":"not_configured"}`)
			return 0
		}
		fmt.Println("Gateway Status\n\n  Status: No gateway configured.\n\nRegister a gateway with: openshell gateway add <endpoint>")
		return 0
	}
	if !f.gatewayUp() {
		return fail(1, "failed to connect to %s: Connection refused (os error 111) (openshell-fake)", ep)
	}
	if out == "json" {
		b, _ := json.Marshal(map[string]any{"gateway": "openshell", "server": ep, "status": "connected",
			"authentication": "none", "version": f.versionString()})
		fmt.Println(string(b))
		return 0
	}
	fmt.Println("\x1b[36;1mServer Status\x1b[0m")
	fmt.Println()
	fmt.Println("  \x1b[2mGateway:\x1b[0m openshell")
	fmt.Printf("  \x1b[2mServer:\x1b[0m %s\n", ep)
	fmt.Println("  \x1b[2mStatus:\x1b[0m \x1b[32mConnected\x1b[0m")
	fmt.Printf("  \x1b[2mVersion:\x1b[0m %s\n", f.versionString())
	return 0
}

// gatewayCmd is `openshell gateway add|list`.
func (f *fake) gatewayCmd(args []string) int {
	if len(args) == 0 {
		return fail(2, "'openshell gateway' requires a subcommand")
	}
	switch args[0] {
	case "add":
		return f.gatewayAdd(args[1:])
	case "list":
		return f.gatewayList(args[1:])
	}
	return fail(2, "openshell-fake implements only `gateway add` and `gateway list`")
}

// gatewayAdd is `openshell gateway add ENDPOINT [--name N] [--local|--remote D]`.
func (f *fake) gatewayAdd(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"--name": true, "--local": false, "--remote": true}, 1)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 1 {
		return fail(2, "the following required arguments were not provided: <ENDPOINT>")
	}
	if fl.has("--local") && fl.has("--remote") {
		return fail(2, "the argument '--local' cannot be used with '--remote <REMOTE>'")
	}
	u, code := gatewayAddEndpoint(fl)
	if code != 0 {
		return code
	}
	name := fl.value("--name")
	if name == "" {
		name = u.Hostname()
	}
	// A name already registered is refused (commands/gateway.rs
	// v0.0.111:840-850, run.rs gateway_add v0.0.83:955).
	if r, ok := f.registered(); ok && r.Name == name {
		return fail(1, "Gateway '%s' already exists.\nRemove it first with: openshell gateway remove %s\nOr choose a different name with: --name <name>", name, name)
	}
	b, _ := json.Marshal(registration{Name: name, Endpoint: fl.pos[0], Local: fl.has("--local")})
	if err := os.WriteFile(f.regPath(), b, 0o600); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Printf("✓ Gateway %s added (%s)\n", name, fl.pos[0])
	return 0
}

// gatewayAddEndpoint parses `gateway add`'s ENDPOINT: an http, https or
// ssh URL with a host; an https one needs --local or --remote.
func gatewayAddEndpoint(fl flags) (*url.URL, int) {
	u, err := url.Parse(fl.pos[0])
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ssh" {
		return nil, fail(1, "invalid gateway endpoint %q", fl.pos[0])
	}
	if u.Scheme == "https" && !fl.has("--local") && !fl.has("--remote") {
		// an https endpoint without flags is a cloud gateway: a
		// browser login the fake cannot do (main.rs v0.0.111:1109-1112).
		return nil, fail(1, "edge-authenticated gateway registration needs a browser (openshell-fake)")
	}
	return u, 0
}

// registered reads the registration `gateway add` wrote; false when there
// is none or it does not parse.
func (f *fake) registered() (registration, bool) {
	var r registration
	b, err := os.ReadFile(f.regPath())
	if err != nil || json.Unmarshal(b, &r) != nil {
		return registration{}, false
	}
	return r, true
}

// gatewayList is `openshell gateway list [-o json]`.
func (f *fake) gatewayList(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"-o": true, "--output": true}, 0)
	if code != 0 {
		return code
	}
	var regs []registration
	if r, ok := f.registered(); ok {
		regs = append(regs, r)
	}
	if fl.value("-o", "--output") == "json" {
		if regs == nil {
			regs = []registration{}
		}
		b, _ := json.Marshal(regs)
		fmt.Println(string(b))
		return 0
	}
	if len(regs) == 0 {
		fmt.Println("No gateways found.")
	}
	for _, r := range regs {
		fmt.Printf("%s\t%s\n", r.Name, r.Endpoint)
	}
	return 0
}

// gateway pretends to be openshell-gateway until SIGTERM or SIGINT, after
// checking its driver, TLS and port as the real one does (see above).
func (f *fake) gateway(args []string) int {
	if _, ok := f.fails["gateway-no-start"]; ok {
		return fail(1, "openshell-gateway (fake): failed to bind: address in use")
	}
	spec := map[string]bool{"--drivers": true, "--driver": true, "--disable-tls": false, "--tls-cert": true,
		"--tls-key": true, "--port": true, "--bind-address": true, "--config": true, "--log-level": true}
	fl, code := parseFlags(args, spec, 0)
	if code != 0 {
		return code
	}
	driver, code := gatewayDriver(fl)
	if code != 0 {
		return code
	}
	disableTLS, code := gatewayTLS(fl)
	if code != 0 {
		return code
	}
	port, code := gatewayPort(fl)
	if code != 0 {
		return code
	}
	bind := fl.value("--bind-address")
	if bind == "" {
		bind = "127.0.0.1"
	}
	supervisor, code := gatewaySupervisorImage(fl.value("--config"))
	if code != 0 {
		return code
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		return fail(1, "failed to bind %s:%s: %v", bind, port, err)
	}
	defer ln.Close()
	go acceptAndClose(ln)
	scheme := "https"
	if disableTLS {
		scheme = "http"
	}
	os.WriteFile(filepath.Join(f.state, "gateway-scheme"), []byte(scheme), 0o600)
	info, _ := json.Marshal(map[string]string{"driver": driver, "listen": ln.Addr().String(), "scheme": scheme, "supervisor_image": supervisor})
	os.WriteFile(filepath.Join(f.state, "gateway-info.json"), info, 0o600)
	pidFile := filepath.Join(f.state, "gateway.pid")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Printf("openshell-gateway (fake) listening on %s://%s, driver %s\n", scheme, ln.Addr(), driver)
	<-sig
	os.Remove(pidFile)
	fmt.Println("openshell-gateway (fake) stopped")
	return 0
}

// gatewayDriver resolves the gateway's one compute driver: --drivers,
// --driver, OPENSHELL_DRIVERS, else auto-detection; only podman is faked.
func gatewayDriver(fl flags) (string, int) {
	driver := fl.value("--drivers", "--driver")
	if driver == "" {
		driver = os.Getenv("OPENSHELL_DRIVERS")
	}
	if driver == "" {
		driver = detectDriver()
	}
	switch driver {
	case "":
		return "", fail(1, "no compute driver configured and auto-detection found no suitable installed driver; set --drivers <name> or OPENSHELL_DRIVERS=<name>")
	case "podman":
		if podmanSocket() == "" {
			return "", fail(1, "podman compute driver: no responding Podman API socket (OPENSHELL_PODMAN_SOCKET, $XDG_RUNTIME_DIR/podman/podman.sock)")
		}
	case "docker", "kubernetes", "vm":
		return "", fail(1, "openshell-fake: the %s driver is not faked; use --drivers podman", driver)
	default:
		return "", fail(2, "invalid value '%s' for '--drivers <DRIVERS>'", driver)
	}
	return driver, 0
}

// gatewayTLS reports whether TLS is disabled (--disable-tls or
// OPENSHELL_DISABLE_TLS=true); with TLS on, --tls-cert and --tls-key are
// required.
func gatewayTLS(fl flags) (disabled bool, code int) {
	if fl.has("--disable-tls") || os.Getenv("OPENSHELL_DISABLE_TLS") == "true" {
		return true, 0
	}
	if fl.value("--tls-cert") == "" {
		return false, fail(1, "--tls-cert is required when TLS is enabled (use --disable-tls to skip)")
	}
	if fl.value("--tls-key") == "" {
		return false, fail(1, "--tls-key is required when TLS is enabled (use --disable-tls to skip)")
	}
	return false, 0
}

// gatewayPort resolves the listening port: --port, OPENSHELL_SERVER_PORT,
// else 17670; it must fit 16 bits.
func gatewayPort(fl flags) (string, int) {
	port := fl.value("--port")
	if port == "" {
		port = os.Getenv("OPENSHELL_SERVER_PORT")
	}
	if port == "" {
		port = "17670"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fail(2, "invalid value '%s' for '--port <PORT>'", port)
	}
	return port, 0
}

// gatewaySupervisorImage reads supervisor_image from the --config file
// (the last assignment wins); "" without a file.
func gatewaySupervisorImage(config string) (string, int) {
	if config == "" {
		return "", 0
	}
	data, err := os.ReadFile(config)
	if err != nil {
		return "", fail(1, "failed to read gateway config %s: %v", config, err)
	}
	supervisor := ""
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "supervisor_image" {
			supervisor = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return supervisor, 0
}

// acceptAndClose accepts connections on ln and closes each at once (a
// listener that answers connects) until ln is closed.
func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// detectDriver is detect_driver: Kubernetes, then a responding Podman
// socket, then a Docker socket.
func detectDriver() string {
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return "kubernetes"
	}
	if podmanSocket() != "" {
		return "podman"
	}
	for _, p := range []string{"/var/run/docker.sock", filepath.Join(os.Getenv("HOME"), ".docker/run/docker.sock")} {
		if socketResponds(p) {
			return "docker"
		}
	}
	return ""
}

// podmanSocket returns the first responding Podman socket candidate.
func podmanSocket() string {
	var cands []string
	if s := strings.TrimSpace(os.Getenv("OPENSHELL_PODMAN_SOCKET")); s != "" {
		cands = append(cands, s)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		cands = append(cands, filepath.Join(d, "podman/podman.sock"))
	}
	for _, c := range cands {
		if socketResponds(c) {
			return c
		}
	}
	return ""
}

func socketResponds(p string) bool {
	c, err := net.DialTimeout("unix", p, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// podman stands in for `podman system service --time=0 unix://PATH` (the
// Podman API service the podman driver talks to) and `podman --version`.
func (f *fake) podman(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("podman version 4.9.3 (openshell-fake)")
		return 0
	}
	if len(args) < 2 || args[0] != "system" || args[1] != "service" {
		return fail(125, "openshell-fake podman implements only `system service` and `--version`")
	}
	fl, code := parseFlags(args[2:], map[string]bool{"--time": true, "-t": true, "--log-level": true}, 1)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 1 || !strings.HasPrefix(fl.pos[0], "unix://") {
		return fail(125, "openshell-fake podman wants unix://PATH")
	}
	p := strings.TrimPrefix(fl.pos[0], "unix://")
	os.Remove(p)
	ln, err := net.Listen("unix", p)
	if err != nil {
		return fail(125, "%v", err)
	}
	defer ln.Close()
	go acceptAndClose(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return 0
}

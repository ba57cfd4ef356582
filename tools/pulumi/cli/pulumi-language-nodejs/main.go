// Command pulumi-language-nodejs is klutch-kit's Node.js language host for the Pulumi CLI.
//
// Why our own: upstream's host is the module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3,
// which has no tags and is only published as pseudo-versions; the Go module proxy reachable from this project's
// machines serves none of them (every pseudo-version, including the one of the v3.248.0 release commit, is
// refused), so it cannot be built from Go modules here. This host implements the part of the LanguageRuntime
// gRPC service that `pulumi preview/up/refresh/destroy` use for a Node.js program:
//
//   - Run: starts `node [nodeargs] <node_modules>/@pulumi/pulumi/cmd/run --monitor … <entrypoint>` with the
//     stack config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS, exactly the contract @pulumi/pulumi's
//     cmd/run reads, and reports the exit status (exit code 32 = "already reported", so bail quietly);
//   - Handshake, GetPluginInfo, GetRequiredPlugins/GetRequiredPackages (none: plugins are put in place by
//     runtime/realinfra/pulumi-build.ts, never downloaded), About, Cancel.
//
// Everything else (pulumi new/convert/package codegen, InstallDependencies) answers Unimplemented.
// Runtime options from Pulumi.yaml: typescript (default true, as upstream: sets PULUMI_NODEJS_TYPESCRIPT),
// tsconfig, nodeargs (split like a shell would, without expansion).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// exitCodeAlreadyReported is the exit code @pulumi/pulumi's cmd/run uses after it printed a user-actionable error.
const exitCodeAlreadyReported = 32

// runModule is the @pulumi/pulumi entry point that runs a program.
const runModule = "@pulumi/pulumi/cmd/run"

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	tracing       string
	cancelCtx     context.Context
	cancel        context.CancelFunc
}

func main() {
	fs := flag.NewFlagSet("pulumi-language-nodejs", flag.ContinueOnError)
	tracing := fs.String("tracing", "", "tracing endpoint (passed on to the program)")
	runtimeName := fs.String("runtime", "nodejs", "runtime; only nodejs is supported")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println(version.Version)
		return
	}
	if *runtimeName != "nodejs" {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: -runtime %q is not supported; only nodejs\n", *runtimeName)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cancelServe := make(chan bool)
	go func() {
		<-ctx.Done()
		close(cancelServe)
	}()

	h := &host{tracing: *tracing}
	h.cancelCtx, h.cancel = context.WithCancel(context.Background())
	if args := fs.Args(); len(args) > 0 {
		h.engineAddress = args[0]
		// Exit when the engine goes away.
		if err := rpcutil.Healthcheck(ctx, h.engineAddress, 5*time.Minute, stop); err != nil {
			fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: health check of engine %s: %v\n", h.engineAddress, err)
			os.Exit(1)
		}
	}

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancelServe,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: cannot serve: %v\n", err)
		os.Exit(1)
	}
	// The spawner reads the port from our first stdout line.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: stopped serving: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	h.engineAddress = req.GetEngineAddress()
	h.mu.Unlock()
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// GetRequiredPlugins reports none: the kubernetes provider is placed by klutch-kit's build and found by the engine
// when the program registers its first kubernetes resource.
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node is not on PATH: %w", err)
	}
	out, _ := exec.CommandContext(ctx, node, "--version").Output()
	return &pulumirpc.AboutResponse{Executable: node, Version: strings.TrimSpace(string(out))}, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancel()
	return &emptypb.Empty{}, nil
}

// options are the runtime options of Pulumi.yaml (`runtime: {name: nodejs, options: {...}}`).
type options struct {
	typescript bool
	tsconfig   string
	nodeargs   []string
}

func parseOptions(raw map[string]any) (options, error) {
	o := options{typescript: true}
	for k, v := range raw {
		switch k {
		case "typescript":
			b, ok := v.(bool)
			if !ok {
				return o, fmt.Errorf("Pulumi.yaml runtime option typescript: expected a boolean, got %v (%T)", v, v)
			}
			o.typescript = b
		case "tsconfig":
			s, ok := v.(string)
			if !ok {
				return o, fmt.Errorf("Pulumi.yaml runtime option tsconfig: expected a string, got %v (%T)", v, v)
			}
			o.tsconfig = s
		case "nodeargs":
			s, ok := v.(string)
			if !ok {
				return o, fmt.Errorf("Pulumi.yaml runtime option nodeargs: expected a string, got %v (%T)", v, v)
			}
			args, err := splitArgs(s)
			if err != nil {
				return o, fmt.Errorf("Pulumi.yaml runtime option nodeargs %q: %w", s, err)
			}
			o.nodeargs = args
		case "packagemanager":
			// npm only; nothing to choose here.
		default:
			return o, fmt.Errorf("Pulumi.yaml runtime option %q is not supported by this language host "+
				"(supported: typescript, tsconfig, nodeargs, packagemanager)", k)
		}
	}
	return o, nil
}

// splitArgs splits a command line like a POSIX shell without expansions: whitespace separates words,
// single and double quotes group, backslash escapes outside single quotes.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, errors.New("trailing backslash")
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// findRunModule walks up from dir looking for node_modules/@pulumi/pulumi/cmd/run.
func findRunModule(dir string) (string, error) {
	if p := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH"); p != "" {
		return p, nil
	}
	start := dir
	for {
		candidate := filepath.Join(dir, "node_modules", filepath.FromSlash(runModule))
		if st, err := os.Stat(filepath.Join(candidate, "index.js")); err == nil && !st.IsDir() {
			return candidate, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("cannot find %s in a node_modules folder at or above %s; run `npm ci` in the project", runModule, start)
		}
		dir = parent
	}
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	if info == nil {
		return &pulumirpc.RunResponse{Error: "RunRequest.info is missing (engine too old for this language host)"}, nil
	}
	opts, err := parseOptions(info.GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not find node on the PATH: %v", err)}, nil
	}
	runPath, err := findRunModule(info.GetProgramDirectory())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	h.mu.Lock()
	engine := h.engineAddress
	h.mu.Unlock()

	args := append([]string{}, opts.nodeargs...)
	args = append(args, runPath)
	add := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", engine)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("root-directory", info.GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", info.GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("tracing", h.tracing)
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	cfg := req.GetConfig()
	if cfg == nil {
		cfg = map[string]string{}
	}
	cfgJSON, err := jsonString(cfg)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("cannot serialise the stack config: %v", err)}, nil
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := jsonString(secretKeys)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("cannot serialise the secret config keys: %v", err)}, nil
	}
	env := append(os.Environ(), "PULUMI_CONFIG="+cfgJSON, "PULUMI_CONFIG_SECRET_KEYS="+secretJSON)
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	cmdCtx, cmdCancel := context.WithCancel(h.cancelCtx)
	defer cmdCancel()
	context.AfterFunc(ctx, cmdCancel)
	cmd := exec.CommandContext(cmdCtx, node, args...)
	cmd.Env = env
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	// Copy through pipes: node may switch its stdio to non-blocking mode, which must not leak to ours.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not start %s: %v", node, err)}, nil
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(os.Stdout, stdout) }()
	go func() { defer wg.Done(); _, _ = io.Copy(os.Stderr, stderr) }()
	wg.Wait()
	err = cmd.Wait()
	if err == nil {
		return &pulumirpc.RunResponse{}, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if exitErr.ExitCode() == exitCodeAlreadyReported {
			return &pulumirpc.RunResponse{Bail: true}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode())}, nil
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("Problem executing program (could not run node): %v", err)}, nil
}

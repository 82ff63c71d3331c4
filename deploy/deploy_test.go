package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"
	"gopkg.in/yaml.v3"

	"github.com/weft-run/weft/bus"
)

// container is a weft or NATS container of a manifest.
type container struct {
	where string   // the manifest and the service or workload
	image string   // its image
	args  []string // its arguments (after the image's entrypoint)
	// env maps the variables set on it to their values ("" when they come
	// from elsewhere: a field, a secret).
	env map[string]string
}

// manifests are the parsed deployment files.
type manifests struct {
	image string // the image name the Dockerfile documents
	// containers of compose.yaml and k8s/*.yaml.
	containers []container
	// natsConfigs are the nats-server configurations: file name to text.
	natsConfigs map[string]string
	// natsHosts are the hosts of the NATS servers by deployment
	// ("compose", "k8s"), in order.
	natsHosts map[string][]string
}

// readYAML decodes every document of path.
func readYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// dig walks keys (string keys of maps, int indexes of lists) into v.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

var imageLine = regexp.MustCompile(`(?m)^# Image: (\S+)$`)

// load parses the Dockerfile, compose.yaml and every k8s/*.yaml.
func load(t *testing.T) manifests {
	t.Helper()
	m := manifests{natsConfigs: map[string]string{}, natsHosts: map[string][]string{}}
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	match := imageLine.FindSubmatch(df)
	if match == nil {
		t.Fatal("the Dockerfile documents no image name (a line \"# Image: NAME\")")
	}
	m.image = string(match[1])

	// compose.yaml
	for _, doc := range readYAML(t, "compose.yaml") {
		services, _ := doc["services"].(map[string]any)
		names := make([]string, 0, len(services))
		for name := range services {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			svc := services[name]
			c := container{where: "compose.yaml " + name, image: str(dig(svc, "image")), args: strList(dig(svc, "command")), env: map[string]string{}}
			env, _ := dig(svc, "environment").(map[string]any)
			for k, v := range env {
				c.env[k] = fmt.Sprint(v)
			}
			m.containers = append(m.containers, c)
			if isNATS(c.image) {
				m.natsHosts["compose"] = append(m.natsHosts["compose"], name)
			}
		}
	}
	conf, err := os.ReadFile(filepath.Join("compose", "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	m.natsConfigs["compose/nats.conf"] = string(conf)

	// k8s/*.yaml: the ConfigMaps and Secrets first (envFrom and
	// configMapKeyRef read them), then the workloads.
	files, err := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no k8s manifests (%v)", err)
	}
	var docs []map[string]any
	where := map[int]string{}
	for _, f := range files {
		for _, d := range readYAML(t, f) {
			where[len(docs)] = f
			docs = append(docs, d)
		}
	}
	data := map[string]map[string]string{} // "ConfigMap/name" to its data
	for _, d := range docs {
		kind, name := str(d["kind"]), str(dig(d, "metadata", "name"))
		if kind != "ConfigMap" && kind != "Secret" {
			continue
		}
		vals := map[string]string{}
		for _, field := range []string{"data", "stringData"} {
			kv, _ := d[field].(map[string]any)
			for k, v := range kv {
				vals[k] = fmt.Sprint(v)
			}
		}
		data[kind+"/"+name] = vals
		if conf, ok := vals["nats.conf"]; ok {
			m.natsConfigs["k8s "+kind+"/"+name] = conf
		}
	}
	for i, d := range docs {
		kind, name := str(d["kind"]), str(dig(d, "metadata", "name"))
		if kind != "Deployment" && kind != "StatefulSet" {
			continue
		}
		specs, _ := dig(d, "spec", "template", "spec", "containers").([]any)
		for _, s := range specs {
			c := container{
				where: fmt.Sprintf("%s %s/%s container %s", where[i], kind, name, str(dig(s, "name"))),
				image: str(dig(s, "image")),
				args:  append(strList(dig(s, "command")), strList(dig(s, "args"))...),
				env:   map[string]string{},
			}
			envs, _ := dig(s, "env").([]any)
			for _, e := range envs {
				v := str(dig(e, "value"))
				if ref := dig(e, "valueFrom", "configMapKeyRef"); ref != nil {
					cm, ok := data["ConfigMap/"+str(dig(ref, "name"))]
					if !ok {
						t.Errorf("%s: env %s reads the ConfigMap %q, which no manifest defines", c.where, str(dig(e, "name")), str(dig(ref, "name")))
					}
					v = cm[str(dig(ref, "key"))]
				}
				c.env[str(dig(e, "name"))] = v
			}
			from, _ := dig(s, "envFrom").([]any)
			for _, f := range from {
				for kind, field := range map[string]string{"Secret": "secretRef", "ConfigMap": "configMapRef"} {
					ref := dig(f, field)
					if ref == nil {
						continue
					}
					vals, ok := data[kind+"/"+str(dig(ref, "name"))]
					if !ok {
						t.Errorf("%s: envFrom reads the %s %q, which no manifest defines", c.where, kind, str(dig(ref, "name")))
					}
					for k, v := range vals {
						c.env[k] = v
					}
				}
			}
			m.containers = append(m.containers, c)
			if isNATS(c.image) && kind == "StatefulSet" {
				svc := str(dig(d, "spec", "serviceName"))
				n, _ := dig(d, "spec", "replicas").(int)
				for i := range n {
					m.natsHosts["k8s"] = append(m.natsHosts["k8s"], fmt.Sprintf("%s-%d.%s", name, i, svc))
				}
			}
		}
	}
	return m
}

// isNATS reports whether image is the official nats-server image.
func isNATS(image string) bool { return image == "nats" || strings.HasPrefix(image, "nats:") }

// deployment is where a container is: "compose" or "k8s".
func (c container) deployment() string {
	if strings.HasPrefix(c.where, "compose.yaml") {
		return "compose"
	}
	return "k8s"
}

// expand replaces the $(NAME) references of Kubernetes in arg with the
// container's env values and returns the names it used.
func (c container) expand(arg string) (string, []string) {
	var used []string
	out := kubeRef.ReplaceAllStringFunc(arg, func(ref string) string {
		name := ref[2 : len(ref)-1]
		used = append(used, name)
		return c.env[name]
	})
	return out, used
}

var kubeRef = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)

// cliFlags are the flags of a weft subcommand: name to whether it takes a
// value.
type cliFlags map[string]bool

// binDir is where weftBuild puts the weft binary, made and removed by
// TestMain.
var binDir string

// weftBuild builds cmd/weft once per test binary and returns its path.
var weftBuild = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "weft")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/weft").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/weft: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "weft-deploy-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(binDir)
	os.Exit(code)
}

// flagLine is a flag's line in pflag's usage ("  -o, --output FORMAT   …"
// or "      --demo   …"): its long name and, for a flag with a value, the
// value's name, one space after the name; a flag without one is followed by
// the column gap or the end of the line.
var flagLine = regexp.MustCompile(`^\s+(?:-[a-zA-Z0-9], )?--([a-zA-Z0-9][a-zA-Z0-9-]*)(?: (\S+))?(?:\s{2,}.*)?$`)

// helpOf runs `weft args... --help` and returns what it printed (help).
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	out, err := help(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// help runs `weft args... --help` and returns what it printed. Asked-for
// help goes to stdout and exits 0.
func help(args ...string) (string, error) {
	bin, err := weftBuild()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, append(args, "--help")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("weft %s --help: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// parseFlags reads the flag lines of a usage text.
func parseFlags(usage string, into cliFlags) {
	for line := range strings.SplitSeq(usage, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			into[m[1]] = m[2] != ""
		}
	}
}

// subcommandFlags runs `weft sub --help` and parses the flags of its usage,
// with the global flags its own "global flags (...): --nats, -o/--output"
// line names (whether each takes a value is from `weft --help`). It fails
// when sub is no weft subcommand.
func subcommandFlags(t *testing.T, sub string) cliFlags {
	t.Helper()
	usage := helpOf(t, sub)
	if !strings.HasPrefix(usage, "usage: weft "+sub+" ") {
		t.Fatalf("%q is not a weft subcommand: weft %s --help printed\n%s", sub, sub, usage)
	}
	flags := cliFlags{}
	parseFlags(usage, flags)
	if len(flags) == 0 {
		t.Fatalf("found no flags in the usage of weft %s:\n%s", sub, usage)
	}
	for line := range strings.SplitSeq(usage, "\n") {
		_, names, ok := strings.Cut(line, "global flags (weft --help describes them): ")
		if !ok {
			continue
		}
		global := rootGlobalFlags(t)
		for name := range strings.SplitSeq(names, ", ") {
			if _, long, ok := strings.Cut(name, "/"); ok {
				name = long // -o/--output
			}
			name = strings.TrimLeft(name, "-")
			takesValue, ok := global[name]
			if !ok {
				t.Fatalf("weft %s --help names global flag --%s, which weft --help does not describe", sub, name)
			}
			flags[name] = takesValue
		}
	}
	return flags
}

// rootHelp runs `weft --help` once for the whole test binary.
var rootHelp = sync.OnceValues(func() (string, error) { return help() })

// rootGlobalFlags returns the global flags `weft --help` describes, by
// name: whether each takes a value.
func rootGlobalFlags(t *testing.T) cliFlags {
	t.Helper()
	usage, err := rootHelp()
	if err != nil {
		t.Fatal(err)
	}
	global := cliFlags{}
	if _, part, ok := strings.Cut(usage, "global flags"); ok {
		parseFlags(part, global)
	}
	if len(global) == 0 {
		t.Fatalf("weft --help lists no global flags:\n%s", usage)
	}
	return global
}

// parseArgs checks args (after the subcommand) against flags the way the
// CLI's flag package reads them and returns the values of the flags set.
// Positional arguments are errors: serve and worker take none.
func parseArgs(flags cliFlags, args []string) (map[string]string, error) {
	vals := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return nil, fmt.Errorf("positional argument %q", a)
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := flags[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("flag --%s: the CLI has no such flag", name)
		case takesValue && !hasVal:
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		case !takesValue && hasVal:
			if _, err := strconv.ParseBool(val); err != nil {
				return nil, fmt.Errorf("boolean flag --%s=%q", name, val)
			}
		case !takesValue:
			val = "true"
		}
		vals[name] = val
	}
	return vals, nil
}

func TestParseArgs(t *testing.T) {
	flags := cliFlags{"nats": true, "remote-tools": false, "replicas": true}
	for _, tc := range []struct {
		name    string
		args    []string
		want    map[string]string
		wantErr string
	}{
		{"separate value", []string{"--nats", "nats://a:4222", "--remote-tools"}, map[string]string{"nats": "nats://a:4222", "remote-tools": "true"}, ""},
		{"joined value", []string{"-replicas=3", "--remote-tools=false"}, map[string]string{"replicas": "3", "remote-tools": "false"}, ""},
		{"unknown flag", []string{"--nats", "x", "--bogus", "1"}, nil, "no such flag"},
		{"missing value", []string{"--nats"}, nil, "needs a value"},
		{"positional", []string{"--remote-tools", "extra"}, nil, "positional"},
		{"bad bool", []string{"--remote-tools=maybe"}, nil, "boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(flags, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("values (-want +got):\n%s", d)
			}
		})
	}
}

func TestSubcommandFlagsOfTheCLI(t *testing.T) {
	flags := subcommandFlags(t, "serve")
	// The flags the manifests rely on, as the CLI declares them.
	want := cliFlags{"nats": true, "node-id": true, "replicas": true, "lease-ttl": true, "remote-tools": false}
	for name, takesValue := range want {
		if got, ok := flags[name]; !ok || got != takesValue {
			t.Errorf("weft serve -h: flag --%s (takes a value: %v) parsed as present=%v value=%v", name, takesValue, ok, got)
		}
	}
	if _, ok := flags["no-such-flag"]; ok {
		t.Error("parsed a flag the CLI lacks")
	}
	// A subcommand takes only the global flags its help names: worker
	// takes --nats, not --url or --data.
	worker := subcommandFlags(t, "worker")
	if !worker["nats"] {
		t.Error("weft worker -h: no --nats with a value")
	}
	for _, name := range []string{"url", "data", "output", "timeout"} {
		if _, ok := worker[name]; ok {
			t.Errorf("weft worker -h: parsed global flag --%s, which worker does not take", name)
		}
	}
}

// envRead returns the environment variables the non-test sources of
// cmd/weft read with os.Getenv or os.LookupEnv (literals and constants).
func envRead(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "cmd", "weft", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var args []ast.Expr
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if i < len(n.Values) {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[id.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) != 1 {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
					args = append(args, n.Args[0])
				}
			}
			return true
		})
	}
	read := map[string]bool{}
	for _, a := range args {
		switch a := a.(type) {
		case *ast.BasicLit:
			s, _ := strconv.Unquote(a.Value)
			read[s] = true
		case *ast.Ident:
			if s, ok := consts[a.Name]; ok {
				read[s] = true
			}
		}
	}
	if len(read) == 0 {
		t.Fatal("found no environment variables read by cmd/weft")
	}
	return read
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms, runs []string
	var entrypoint string
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, strings.Join(f[1:], " "))
		case "RUN":
			runs = append(runs, strings.Join(f[1:], " "))
		case "ENTRYPOINT":
			entrypoint = strings.Join(f[1:], " ")
		}
	}
	if len(froms) < 2 {
		t.Errorf("%d stages, want a multi-stage build", len(froms))
	}
	if len(froms) > 0 && froms[len(froms)-1] != "scratch" {
		t.Errorf("the final stage is FROM %s, want FROM scratch", froms[len(froms)-1])
	}
	built := false
	for _, r := range runs {
		if strings.Contains(r, "CGO_ENABLED=0") && strings.Contains(r, "go build") && strings.Contains(r, "./cmd/weft") {
			built = true
		}
	}
	if !built {
		t.Error("no RUN builds ./cmd/weft with CGO_ENABLED=0")
	}
	if entrypoint != `["/weft"]` {
		t.Errorf("ENTRYPOINT %s, want [\"/weft\"]", entrypoint)
	}
	if m := imageLine.FindSubmatch(b); m == nil || strings.Contains(strings.SplitN(string(m[1]), "/", 2)[0], ".") {
		t.Errorf("documented image %q: want a plain name with no registry host", m)
	}
}

func TestManifests(t *testing.T) {
	m := load(t)
	env := envRead(t)
	flagsOf := map[string]cliFlags{}
	weft := map[string]int{} // weft containers by deployment and subcommand
	for _, c := range m.containers {
		if isNATS(c.image) {
			continue
		}
		t.Run(c.where, func(t *testing.T) {
			if c.image != m.image {
				t.Errorf("image %q, want the Dockerfile's %q", c.image, m.image)
			}
			if len(c.args) == 0 {
				t.Fatal("no command: the image's entrypoint needs a subcommand")
			}
			sub := c.args[0]
			if flagsOf[sub] == nil {
				flagsOf[sub] = subcommandFlags(t, sub)
			}
			args := make([]string, len(c.args)-1)
			expanded := map[string]bool{}
			for i, a := range c.args[1:] {
				var used []string
				args[i], used = c.expand(a)
				for _, u := range used {
					if _, ok := c.env[u]; !ok {
						t.Errorf("argument %q references $(%s), which the container does not set", a, u)
					}
					expanded[u] = true
				}
			}
			vals, err := parseArgs(flagsOf[sub], args)
			if err != nil {
				t.Fatalf("weft %s %q: %v", sub, args, err)
			}
			for name := range c.env {
				if !env[name] && !expanded[name] {
					t.Errorf("sets $%s, which weft does not read (it reads %v) and no argument expands", name, slices.Sorted(maps.Keys(env)))
				}
			}
			// --nats lists the deployment's NATS servers.
			var hosts []string
			for u := range strings.SplitSeq(vals["nats"], ",") {
				p, err := url.Parse(u)
				if err != nil || p.Scheme != "nats" || p.Port() != "4222" {
					t.Errorf("--nats URL %q: want nats://HOST:4222", u)
					continue
				}
				hosts = append(hosts, p.Hostname())
			}
			if d := cmp.Diff(m.natsHosts[c.deployment()], hosts); d != "" {
				t.Errorf("--nats hosts (-NATS servers of the deployment +listed):\n%s", d)
			}
			if sub == "serve" && vals["replicas"] != "3" {
				t.Errorf("serve --replicas %q, want 3 on a three-node cluster", vals["replicas"])
			}
			// It authenticates with its role's seed (the NATS admits
			// weft's roles only): serve as node, worker as worker.
			role := map[string]string{"serve": "node", "worker": "worker"}[sub]
			if path.Base(vals["nkey"]) != role+".nk" || (vals["role"] != "" && vals["role"] != role) {
				t.Errorf("weft %s --nkey %q --role %q: want the %s role's seed, %s.nk", sub, vals["nkey"], vals["role"], role, role)
			}
			weft[c.deployment()+" "+sub]++
		})
	}
	want := map[string]int{"compose serve": 2, "compose worker": 2, "k8s serve": 1, "k8s worker": 1}
	if d := cmp.Diff(want, weft); d != "" {
		t.Errorf("weft containers (-want +got):\n%s", d)
	}
	for _, kind := range []string{"compose", "k8s"} {
		if len(m.natsHosts[kind]) != 3 {
			t.Errorf("%s: NATS servers %v, want 3", kind, m.natsHosts[kind])
		}
	}
}

// unindent removes the indentation of every line (the k8s ConfigMap's
// configuration is indented by the YAML block's).
func unindent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}

func TestNATSConfigs(t *testing.T) {
	m := load(t)
	if len(m.natsConfigs) != 2 {
		t.Fatalf("NATS configurations %v, want compose/nats.conf and the k8s ConfigMap's", slices.Sorted(maps.Keys(m.natsConfigs)))
	}
	for name, text := range m.natsConfigs {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SERVER_NAME", "nats-test")
			// The roles' public keys come from the environment, as
			// the deployments set them.
			creds, err := bus.LoadOrCreateCredentials(filepath.Join(t.TempDir(), bus.CredentialsDir))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range bus.Roles() {
				t.Setenv(bus.NKeyEnv(r), creds.PublicKey(r))
			}
			conf := filepath.Join(t.TempDir(), "nats.conf")
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			opts, err := server.ProcessConfigFile(conf)
			if err != nil {
				t.Fatalf("nats-server rejects it: %v", err)
			}
			// The accounts are weft auth-config's, to the letter: the
			// accounts, permissions, exports and imports of every role
			// are the embedded server's.
			block := bus.DefaultLayout().NATSAccounts(func(r bus.Role) string { return "$" + bus.NKeyEnv(r) })
			if !strings.Contains(unindent(text), unindent(block)) {
				t.Errorf("the accounts block is not weft auth-config's (regenerate it):\n%s", block)
			}
			if len(opts.Nkeys) != len(bus.Roles()) || opts.NoAuthUser != "" || opts.Authorization != "" || len(opts.Users) != 0 {
				t.Errorf("users: %d nkeys, no_auth_user %q, %d others; want exactly the %d roles", len(opts.Nkeys), opts.NoAuthUser, len(opts.Users), len(bus.Roles()))
			}
			if !opts.JetStream {
				t.Error("JetStream is not enabled")
			}
			if opts.ServerName != "nats-test" {
				t.Errorf("server_name %q, want it from $SERVER_NAME", opts.ServerName)
			}
			if opts.Cluster.Name == "" || opts.Cluster.Port != 6222 {
				t.Errorf("cluster %q on port %d, want a named cluster on 6222", opts.Cluster.Name, opts.Cluster.Port)
			}
			var routes []string
			for _, r := range opts.Routes {
				routes = append(routes, r.Hostname())
			}
			deployment := "k8s"
			if strings.HasPrefix(name, "compose") {
				deployment = "compose"
			}
			if d := cmp.Diff(m.natsHosts[deployment], routes); d != "" {
				t.Errorf("routes (-NATS servers of the deployment +routes):\n%s", d)
			}
		})
	}
}

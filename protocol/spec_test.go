package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-run/weft/bus"
)

// specPath is the specification this package implements.
const specPath = "../docs/worker-protocol.md"

func readSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa[N int | int64](n N) string { return strconv.FormatInt(int64(n), 10) }

// TestSpecNamesTheWire: docs/worker-protocol.md gives the subjects,
// headers, report types and figures of this package, so that a worker
// written from it alone speaks with the Go side.
func TestSpecNamesTheWire(t *testing.T) {
	spec := readSpec(t)
	// notation turns a subject built for bus.Default with placeholder
	// tokens into the spec's notation: old, new pairs after the root.
	notation := func(subject string, err error, oldnew ...string) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return "`<root>" + strings.NewReplacer(oldnew...).Replace(strings.TrimPrefix(subject, bus.Default.Root())) + "`"
	}
	call, err := WorkerCallSubject(bus.Default, "TOOL")
	cancel, cerr := WorkerCancelSubject(bus.Default, "SID", "RID", "CID")
	queue, qerr := WorkerQueueSubject(bus.Default, "POOL", "TOOL")
	cons := WorkerPoolConsumerConfig(bus.Default, "POOL")
	scfg := WorkerQueueStreamConfig(bus.Default, 1)
	want := []string{
		notation(call, err, "TOOL", "<tool>"),
		notation(cancel, cerr, "SID", "<session id>", "RID", "<run id>", "CID", "<call id>"),
		notation(WorkerCancelFilter(bus.Default), nil),
		notation(WorkerDescribeSubject(bus.Default), nil),
		notation(queue, qerr, "POOL", "<pool>", "TOOL", "<tool>"),
		notation(scfg.Subjects[0], nil),
		notation(cons.FilterSubject, nil, "POOL", "<pool>"),
		"`" + strings.ReplaceAll(cons.Durable, "POOL", "<pool>") + "`",
		"`" + WorkerQueueStream(bus.Default) + "`",
		"queue group `" + WorkerQueueGroup + "`",
		"`" + HeaderCallID + "`", "`" + HeaderDelivery + "`", "`" + HeaderHeartbeat + "`", "`" + HeaderReply + "`",
		"`" + ReportHeartbeat + "`", "`" + ReportStarted + "`", "`" + ReportRetried + "`", "`" + ReportProgress + "`", "`" + ReportReturned + "`",
		"(currently `" + itoa(WorkerHeartbeat.Milliseconds()) + "`)",
		"**" + itoa(MissedHeartbeats) + " intervals** (" + itoa(int64((MissedHeartbeats * WorkerHeartbeat).Seconds())) + " s)",
		"**" + itoa(MaxDeliveries) + " deliveries**",
		"ack wait " + itoa(int64(cons.AckWait.Seconds())) + " s",
		"(`max_waiting` " + itoa(cons.MaxWaiting) + ")",
		"max age " + itoa(int64(scfg.MaxAge.Hours())) + " h",
		"have " + itoa(DefaultPoolConcurrency) + " unless told otherwise",
		"(" + itoa(DefaultMaxPayloadBytes>>20) + " MiB by",
		"less " + itoa(messageReserve>>10) + " KiB for",
	}
	for _, w := range want {
		if !strings.Contains(spec, w) {
			t.Errorf("%s does not say %s", specPath, w)
		}
	}
}

// TestSpecNamesTheFields: every JSON field of the messages is in the spec.
func TestSpecNamesTheFields(t *testing.T) {
	spec := readSpec(t)
	for _, v := range []any{ToolRequest{}, ToolReport{}, WorkerDescription{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(spec, `"`+name+`"`) && !strings.Contains(spec, "`"+name+"`") {
				t.Errorf("%s does not name field %q of %s", specPath, name, typ.Name())
			}
		}
	}
}

// TestSpecNamesThePackage: every exported name of the package is in the
// spec's table of the Go package.
func TestSpecNamesThePackage(t *testing.T) {
	spec := readSpec(t)
	_, table, ok := strings.Cut(spec, "## The Go package")
	if !ok {
		t.Fatalf("%s has no section The Go package", specPath)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			var names []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names = append(names, s.Name)
					case *ast.ValueSpec:
						names = append(names, s.Names...)
					}
				}
			}
			for _, n := range names {
				if n.IsExported() && !strings.Contains(table, "`"+n.Name+"`") {
					t.Errorf("the Go package's table in %s does not name %s", specPath, n.Name)
				}
			}
		}
	}
}

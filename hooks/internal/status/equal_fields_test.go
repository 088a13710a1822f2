package status

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// notCompared are the schema.Status fields equalStatus leaves out on
// purpose: Metacontroller sets observedGeneration itself.
var notCompared = []string{"ObservedGeneration"}

// TestEqualStatusSeesEveryField walks schema.Status by reflection: for
// every field it can reach (through structs, pointers and slices), a status
// differing in that one field alone, as the API server would store it, must
// not be equal to the status it came from. A field added to schema.Status
// (or to a type it holds) that equalStatus does not compare fails here,
// named by its path.
func TestEqualStatusSeesEveryField(t *testing.T) {
	paths := fieldPaths(reflect.TypeFor[schema.Status](), "")
	if len(paths) < 20 {
		t.Fatalf("walked only %d fields of schema.Status: %v", len(paths), paths)
	}
	for _, path := range paths {
		if isNotCompared(path) {
			continue
		}
		t.Run(path, func(t *testing.T) {
			a, b := fullStatus(), fullStatus()
			change(t, reflect.ValueOf(&b).Elem(), strings.Split(path, "."))
			if equalStatus(a, b) {
				t.Errorf("%s differs, equalStatus says equal: compare it (or list it in notCompared, saying why)", path)
			}
		})
	}
	a, b := fullStatus(), fullStatus()
	if !equalStatus(a, b) {
		t.Fatal("a status is not equal to its copy")
	}
	b.ObservedGeneration++
	if !equalStatus(a, b) {
		t.Error("observedGeneration is Metacontroller's: equalStatus must not compare it")
	}
}

func isNotCompared(path string) bool {
	for _, n := range notCompared {
		if path == n {
			return true
		}
	}
	return false
}

// leaf says whether a type is compared as one value: times (their
// precision is the API server's), and everything that is not a struct,
// pointer or slice.
func leaf(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime]():
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice:
		return false
	}
	return true
}

// fieldPaths are the dotted paths of every field reachable from t; a path
// through a pointer or slice names it once (its nil-ness, its length) and
// then the fields of its element.
func fieldPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		p := prefix + f.Name
		out = append(out, p)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		switch {
		case !leaf(ft):
			out = append(out, fieldPaths(ft, p+".")...)
		case ft != f.Type:
			out = append(out, p+".*") // the value behind the pointer or in the slice
		}
	}
	return out
}

// fullStatus is a status with every field set: each pointer non-nil,
// each slice of one element, each value non-zero, times whole seconds.
func fullStatus() schema.Status {
	var s schema.Status
	fill(reflect.ValueOf(&s).Elem())
	return s
}

var stampTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func fill(v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[metav1.Time]():
		v.Set(reflect.ValueOf(metav1.NewTime(stampTime)))
		return
	case reflect.TypeFor[metav1.MicroTime]():
		v.Set(reflect.ValueOf(metav1.NewMicroTime(stampTime)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.String:
		v.SetString("a")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

// change makes the field at path differ: a leaf gets another value (a time
// one second later), a pointer becomes nil, a slice gets a second element;
// "*" is the value behind a pointer or in a slice.
func change(t *testing.T, v reflect.Value, path []string) {
	t.Helper()
	f := v.FieldByName(path[0])
	if len(path) == 2 && path[1] == "*" {
		for f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice {
			if f.Kind() == reflect.Pointer {
				f = f.Elem()
			} else {
				f = f.Index(0)
			}
		}
		changeLeaf(t, f)
		return
	}
	if len(path) == 1 {
		switch f.Kind() {
		case reflect.Pointer:
			f.SetZero()
		case reflect.Slice:
			f.Set(reflect.Append(f, f.Index(0)))
		default:
			changeLeaf(t, f)
		}
		return
	}
	for f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice {
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		} else {
			f = f.Index(0)
		}
	}
	change(t, f, path[1:])
}

// changeLeaf gives a leaf another value.
func changeLeaf(t *testing.T, f reflect.Value) {
	t.Helper()
	{
		switch {
		case f.Type() == reflect.TypeFor[metav1.Time]():
			f.Set(reflect.ValueOf(metav1.NewTime(stampTime.Add(time.Second))))
		case f.Type() == reflect.TypeFor[metav1.MicroTime]():
			f.Set(reflect.ValueOf(metav1.NewMicroTime(stampTime.Add(time.Microsecond))))
		case f.Kind() == reflect.String:
			f.SetString(f.String() + "x")
		case f.Kind() == reflect.Bool:
			f.SetBool(!f.Bool())
		case f.CanInt():
			f.SetInt(f.Int() + 1)
		default:
			t.Fatalf("change: cannot change a %s", f.Type())
		}
	}
}

package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// Updates are JSON Merge Patches (RFC 7396) over the fields of a record's
// create request: the patch is applied to the record as its create request
// would render it, and the result is read by the create's own reader, so
// every rule and message of the create applies to the updated record.

// mergePatch applies patch to target as RFC 7396 defines it: a null member
// removes the target's, an object member merges into the target's (an
// object, else {}), anything else replaces it. target is not modified.
func mergePatch(target, patch map[string]any) map[string]any {
	out := make(map[string]any, len(target)+len(patch))
	for k, v := range target {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergeValue(out[k], v)
	}
	return out
}

// mergeValue is RFC 7396's MergePatch(Target, Patch) for any JSON values.
func mergeValue(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	return mergePatch(t, p)
}

// Patch is a merge patch whose keys are known fields of a create request T,
// none read-only. Its JSON form, the patch itself, is its fingerprint: key
// order and white space do not matter, null does (it removes).
type Patch[T any] struct {
	patch map[string]any
	read  func(*reader, map[string]any) T
}

// MarshalJSON implements json.Marshaler: the patch object.
func (p Patch[T]) MarshalJSON() ([]byte, error) {
	return json.Marshal(p.patch)
}

// parsePatch decodes a merge patch over the create request T whose reader is
// read and whose top-level fields are fields (a *MalformedBodyError if the
// body is not one well-formed JSON object). A key in readOnly is a
// violation ("is read-only"), as is one in neither list ("is not a known
// field"). What the patch does to the record is checked when it is applied
// (Patch.Apply), since it depends on the record.
func parsePatch[T any](raw []byte, fields, readOnly []string, read func(*reader, map[string]any) T) (Parsed[Patch[T]], error) {
	return parseBody(raw, func(r *reader, body map[string]any) Patch[T] {
		known := make(map[string]string, len(fields)+len(readOnly))
		for _, f := range fields {
			known[f] = ""
		}
		for _, f := range readOnly {
			known[f] = "is read-only"
		}
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			msg, ok := known[k]
			switch {
			case !ok:
				r.add(join("", k), "is not a known field")
			case msg != "":
				r.add(join("", k), "%s", msg)
			}
		}
		return Patch[T]{patch: body, read: read}
	})
}

// Apply merges the patch into current, the record as its create request
// renders it (asObject), and reads the result as a create request: the
// request the updated record would be created by, or the
// *ValidationError of every rule the result breaks.
func (p Patch[T]) Apply(current map[string]any) (T, error) {
	r := &reader{}
	out := p.read(r, mergePatch(current, p.patch))
	return out, r.err()
}

// asObject renders v (a request or state struct) as the generic JSON object
// the readers and mergePatch work on, numbers as json.Number.
func asObject(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("render %T: %w", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("render %T: %w", v, err)
	}
	return m, nil
}

// changedFields lists, sorted, the top-level fields whose values differ
// between before and after (present in one only, or unequal).
func changedFields(before, after map[string]any) []string {
	changed := []string{}
	for k, v := range after {
		if w, ok := before[k]; !ok || !reflect.DeepEqual(v, w) {
			changed = append(changed, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

package command

import "strconv"

// Precondition is a parsed If-Match header (RFC 9110 §13.1.1): the entity
// tags a write to an existing record requires, or any record at all. A nil
// *Precondition (no header) holds always: the write applies to the latest
// version.
type Precondition struct {
	// Any is If-Match: *, which holds for any existing record.
	Any bool
	// Tags are the opaque tags of the list, with their quotes and without
	// W/ ("\"<id>.<version>\""), since the comparison is weak.
	Tags []string
}

// ETag is the weak entity tag of version of the record id: W/"<id>.<version>".
// GET answers it, and If-Match names it; it changes with every event of the
// record.
func ETag(id string, version int) string {
	return `W/` + opaqueTag(id, version)
}

func opaqueTag(id string, version int) string {
	return `"` + id + "." + strconv.Itoa(version) + `"`
}

// Holds reports whether the record id at version satisfies p: no
// precondition, *, or a listed tag equal to its ETag by weak comparison.
func (p *Precondition) Holds(id string, version int) bool {
	if p == nil || p.Any {
		return true
	}
	want := opaqueTag(id, version)
	for _, t := range p.Tags {
		if t == want {
			return true
		}
	}
	return false
}

// check is p as the error a write answers: ErrPreconditionFailed unless it
// holds.
func (p *Precondition) check(id string, version int) error {
	if p.Holds(id, version) {
		return nil
	}
	return ErrPreconditionFailed
}

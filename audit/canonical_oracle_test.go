package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"testing"
)

// canonicalByDecoding is the first implementation of CanonicalJSON, kept
// as the oracle the streaming one is fuzzed against: decode into
// map[string]any with json.Number, write that out.
func canonicalByDecoding(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("canonical JSON: trailing data")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		b.Write(appendCanonicalString(nil, v))
	case json.Number:
		out, err := appendCanonicalNumber(nil, v)
		b.Write(out)
		return err
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		return writeCanonicalObject(b, v)
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

func writeCanonicalObject(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { return compareUTF16([]byte(x), []byte(y)) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendCanonicalString(nil, k))
		b.WriteByte(':')
		if err := writeCanonical(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// FuzzCanonicalJSONAgreesWithDecoding: the streaming canonicalizer gives
// byte for byte what decoding the document and writing it out gives, and
// fails where that fails.
func FuzzCanonicalJSONAgreesWithDecoding(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[1.5,"x\u0001",null],"a":{"z":[],"y":{}}}`, `-0`, `[1e400]`, `"\ud800x"`,
		`{"\u00e9":1,"e\u0301":2, "\ud83d\ude00":3,"\uffff":4}`, " [ 123456789012345678 , -12 , 0.10 ] ", `{"a":"\xff"}`, `[1,]`, `{} x`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := canonicalByDecoding(in)
		got, err := CanonicalJSON(in)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("CanonicalJSON(%q) = %q, %v; decoding gives %q, %v", in, got, err, want, wantErr)
		}
	})
}

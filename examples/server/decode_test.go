package main

import (
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeSubmit checks that any body either yields a request that is
// valid in every respect, or an error naming a field, and never panics.
func FuzzDecodeSubmit(f *testing.F) {
	for _, s := range []string{
		`{"userId":"player-42","score":8500}`,
		`{"score":-0.5,"userId":"é"}`,
		`{"userId":"a","score":1e308}`,
		`{"userId":"a","score":NaN}`,
		`{"userId":"a","score":"1"}`,
		`{"userId":"a","score":1,"x":[1,{"y":2}]}`,
		`{"userId":"a" , "score" : 0x1}`,
		`[]`, `{}`, ``, `{"userId":"\u0000","score":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fe := decodeSubmit(body, -1e6, 1e6)
		if fe != nil {
			if fe.field == "" || fe.msg == "" {
				t.Fatalf("error without a field or message: %+v", fe)
			}
			return
		}
		if checkUserID(req.UserID) != nil || !utf8.ValidString(req.UserID) {
			t.Fatalf("accepted a bad userId %q", req.UserID)
		}
		if math.IsNaN(req.Score) || req.Score < -1e6 || req.Score > 1e6 {
			t.Fatalf("accepted a bad score %v", req.Score)
		}
		// What was accepted is what the JSON says.
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if len(m) != 2 || m["userId"] != req.UserID || m["score"] != req.Score {
			t.Fatalf("accepted %q as %+v", body, req)
		}
	})
}

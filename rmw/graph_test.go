package rmw

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckTypeHash(t *testing.T) {
	good := "RIHS01_" + strings.Repeat("09af", 16)
	for _, c := range []struct {
		h  string
		ok bool
	}{
		{"", true},
		{good, true},
		{"RIHS02_" + good[7:], false},
		{good[:len(good)-1], false},
		{good + "0", false},
		{strings.ToUpper(good), false},
		{"RIHS01_" + strings.Repeat("g", 64), false},
		{"RIHS01_" + strings.Repeat(";", 64), false},
	} {
		if err := CheckTypeHash(c.h); (err == nil) != c.ok {
			t.Errorf("%q: %v", c.h, err)
		}
	}
	if err := CheckEndpointOptions(EndpointOptions{TypeHash: good, RequestTypeHash: good, ResponseTypeHash: "x"}); err == nil {
		t.Error("a bad response hash passed")
	}
}

func TestTopicsOf(t *testing.T) {
	eps := []EndpointInfo{
		{Topic: "/b", Type: "T", Publisher: true},
		{Topic: "/a", Type: "U"},
		{Topic: "/a", Type: "T", Publisher: true},
		{Topic: "/a", Type: "T"},
		{Topic: "/a", Type: "T"},
	}
	want := []TopicInfo{
		{Name: "/a", Type: "T", Publishers: 1, Subscriptions: 2},
		{Name: "/a", Type: "U", Subscriptions: 1},
		{Name: "/b", Type: "T", Publishers: 1},
	}
	if got := TopicsOf(eps); !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	SortEndpoints(eps)
	if eps[0].Topic != "/a" || !eps[0].Publisher || eps[4].Topic != "/b" {
		t.Fatalf("sorted %+v", eps)
	}
}

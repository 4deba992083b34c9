package fluidoscmd

import "testing"

func TestFilterKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"cpu>=2":                {"filter[cpu][range][min]", "2"},
		"memory <= 4Gi":         {"filter[memory][range][max]", "4Gi"},
		"architecture~amd.*|x=": {"filter[architecture][range][regex]", "amd.*|x="},
		"category=db~x":         {"filter[category][match]", "db~x"},
		"tags=a>=b":             {"filter[tags][match]", "a>=b"},
	} {
		k, v, err := filterKey(in)
		if err != nil || k != want[0] || v != want[1] {
			t.Errorf("filterKey(%q) = %q, %q, %v; want %q, %q", in, k, v, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"cpu", "=2", ">=2", "", "cpu>2"} {
		if k, _, err := filterKey(bad); err == nil {
			t.Errorf("filterKey(%q) = %q, want an error", bad, k)
		}
	}
}

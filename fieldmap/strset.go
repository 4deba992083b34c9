package fieldmap

import "strings"

// strSet is a set of flags kept as strings: the flags of a FieldMap bound
// to no schema, and those its schema does not have.
type strSet struct {
	set map[string]Action
	// below counts, for every proper ancestor of a set flag, how many set
	// flags lie under it.
	below map[string]int
	// top has bit n set when a set flag lies at or under top-level field n
	// (n < 64), so most queries about unflagged fields end on a bit test.
	top uint64
}

// topField returns the leading field number of flag when it is below 64
// and written without leading zeros (so that one top-level field has one
// spelling: "013" and "13." would otherwise share a bit, and clearing one
// would hide the other).
func topField(flag string) (uint, bool) {
	if len(flag) > 0 && flag[0] == '0' {
		return 0, false
	}
	n := uint(0)
	for i := 0; i < len(flag); i++ {
		c := flag[i]
		if c == '.' {
			return n, i > 0
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint(c-'0')
		if n >= 64 {
			return 0, false
		}
	}
	return n, len(flag) > 0
}

// untouched reports whether no set flag lies at or under the top-level
// field of flag, as far as the top bitmask can tell.
func (s *strSet) untouched(flag string) bool {
	if len(s.set) == 0 {
		return true
	}
	n, ok := topField(flag)
	return ok && s.top&(1<<n) == 0
}

func (s *strSet) isSet(flag string) bool {
	if s.untouched(flag) {
		return false
	}
	_, ok := s.set[flag]
	return ok
}

func (s *strSet) has(flag string) bool {
	if s.untouched(flag) {
		return false
	}
	for i := 0; i < len(flag); i++ {
		if flag[i] == '.' {
			if _, ok := s.set[flag[:i]]; ok {
				return true
			}
		}
	}
	_, ok := s.set[flag]
	return ok
}

func (s *strSet) hasChild(flag string) bool {
	return len(s.below) > 0 && !s.untouched(flag) && s.below[flag] > 0
}

func (s *strSet) hasOrHasChild(flag string) bool {
	return s.hasChild(flag) || s.has(flag)
}

func (s *strSet) setAction(flag string, act Action) {
	if s.set == nil {
		s.set = make(map[string]Action)
	}
	if _, ok := s.set[flag]; ok {
		s.set[flag] = act
		return
	}
	s.set[flag] = act
	if n, ok := topField(flag); ok {
		s.top |= 1 << n
	}
	for i := 0; i < len(flag); i++ {
		if flag[i] == '.' {
			if s.below == nil {
				s.below = make(map[string]int)
			}
			s.below[flag[:i]]++
		}
	}
}

func (s *strSet) clear(flag string) {
	if _, ok := s.set[flag]; !ok {
		return
	}
	delete(s.set, flag)
	for i := 0; i < len(flag); i++ {
		if flag[i] == '.' {
			p := flag[:i]
			if s.below[p]--; s.below[p] <= 0 {
				delete(s.below, p)
			}
		}
	}
	if n, ok := topField(flag); ok {
		root := flag
		if i := strings.IndexByte(flag, '.'); i >= 0 {
			root = flag[:i]
		}
		if _, set := s.set[root]; !set && s.below[root] == 0 {
			s.top &^= 1 << n
		}
	}
}

package fieldmap

// Flag lookup: a schema finds the number of a flag it has in a hash table
// of its flags (flaghash.go), and otherwise walks its flag tree one field
// number at a time, parsing the string as it goes: the walk gives the
// nearest ancestor of a flag the schema does not have, which Has and Bind
// need.

// maxFieldNumber is the largest proto field number.
const maxFieldNumber = 1<<29 - 1

// kid is a child flag of a flag: its field number and its flag number.
type kid struct{ num, id int32 }

// treeNode locates the children of one flag: kids[lo:hi] by field number,
// and, when their numbers are dense enough, direct[dir:dir+span] indexed
// by field number (-1 where no field has the number).
type treeNode struct{ lo, hi, dir, span int32 }

// indexKids builds the child tables of the flag tree and reports whether
// every flag is the canonical dot-joined numbers of its path below its
// parent (true for every schema built from a Shape). Flags that are not
// are found through a map instead.
func (s *Schema) indexKids() bool {
	n := len(s.fields)
	s.nodes = make([]treeNode, n+1)
	for i := range n {
		s.nodes[s.node(s.parent[i])].hi++
	}
	at := int32(0)
	for i := range s.nodes {
		c := s.nodes[i].hi
		s.nodes[i].lo, s.nodes[i].hi = at, at
		at += c
	}
	s.kids = make([]kid, n)
	canonical := true
	for i, f := range s.fields {
		prefix := ""
		if p := s.parent[i]; p >= 0 {
			prefix = s.fields[p].Flag + "."
		}
		num := int32(-1)
		if len(f.Flag) > len(prefix) && f.Flag[:len(prefix)] == prefix {
			if v, rest, ok := parseNumber(f.Flag[len(prefix):]); ok && rest == "" {
				num = v
			}
		}
		if num < 0 {
			canonical = false
		}
		nd := &s.nodes[s.node(s.parent[i])]
		s.kids[nd.hi] = kid{num: num, id: int32(i)}
		nd.hi++
	}
	for i := range s.nodes {
		nd := &s.nodes[i]
		if nd.lo == nd.hi {
			continue
		}
		top := s.kids[nd.hi-1].num
		if top < 0 || top >= 4*(nd.hi-nd.lo)+16 {
			continue // sparse: binary search
		}
		nd.dir, nd.span = int32(len(s.direct)), top+1
		for range top + 1 {
			s.direct = append(s.direct, -1)
		}
		for _, k := range s.kids[nd.lo:nd.hi] {
			s.direct[nd.dir+k.num] = k.id
		}
	}
	return canonical
}

// node returns the index of flag i in nodes: i itself, or the root
// (len(s.fields)) for -1.
func (s *Schema) node(i int32) int32 {
	if i < 0 {
		return int32(len(s.fields))
	}
	return i
}

// parseNumber parses the leading field number of flag: decimal digits, no
// leading zero, at most maxFieldNumber, followed by the end of the string
// or a dot. It returns the number and what follows the dot.
func parseNumber(flag string) (num int32, rest string, ok bool) {
	if flag == "" || flag[0] == '0' {
		return 0, "", false
	}
	v := uint32(0)
	for i := 0; i < len(flag); i++ {
		c := flag[i]
		if c == '.' {
			if i == 0 || v > maxFieldNumber {
				return 0, "", false
			}
			return int32(v), flag[i+1:], true
		}
		d := uint32(c) - '0'
		if d > 9 || i >= 9 {
			return 0, "", false
		}
		v = v*10 + d
	}
	if v > maxFieldNumber {
		return 0, "", false
	}
	return int32(v), "", true
}

// child returns the flag number of field num below flag node (the root
// for -1), or -1.
func (s *Schema) child(node int32, num int32) int32 {
	nd := &s.nodes[s.node(node)]
	if num < nd.span {
		return s.direct[nd.dir+num]
	}
	if nd.span > 0 {
		return -1
	}
	return s.search(nd, num)
}

// search finds field num among the children of nd by binary search.
func (s *Schema) search(nd *treeNode, num int32) int32 {
	lo, hi := nd.lo, nd.hi
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		switch k := s.kids[m].num; {
		case k == num:
			return s.kids[m].id
		case k < num:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

// find returns the number of flag in the schema and true, or, for a flag
// the schema does not have, the number of its nearest ancestor the schema
// has (-1 when none) and false. s must be loaded.
func (s *Schema) find(flag string) (int32, bool) {
	if s.byFlag != nil {
		return s.findMap(flag)
	}
	if i, ok := s.findHash(flag); ok {
		return i, true
	}
	return s.walk(flag)
}

// findSlow is find for a flag findHash did not find.
func (s *Schema) findSlow(flag string) (int32, bool) {
	if s.byFlag != nil {
		return s.findMap(flag)
	}
	return s.walk(flag)
}

// walk is find by the flag tree: it parses and looks up one field number
// at a time, in one loop.
func (s *Schema) walk(flag string) (int32, bool) {
	found, node := int32(-1), int32(len(s.fields))
	for i := 0; ; i++ {
		// The field number flag[start:i]: digits, no leading zero, at
		// most maxFieldNumber (v wraps past 9 digits, refused).
		start, v := i, uint32(0)
		for ; i < len(flag); i++ {
			d := uint32(flag[i]) - '0'
			if d > 9 {
				break
			}
			v = v*10 + d
		}
		if i == start || i-start > 9 || flag[start] == '0' || v > maxFieldNumber || i < len(flag) && flag[i] != '.' {
			return found, false
		}
		nd := &s.nodes[node]
		id := int32(-1)
		if int32(v) < nd.span {
			id = s.direct[nd.dir+int32(v)]
		} else if nd.span == 0 {
			id = s.search(nd, int32(v))
		}
		if id < 0 {
			return found, false
		}
		found, node = id, id
		if i == len(flag) {
			return found, true
		}
	}
}

// findMap is find for schemas whose flags are not all canonical.
func (s *Schema) findMap(flag string) (int32, bool) {
	if i, ok := s.byFlag[flag]; ok {
		return i, true
	}
	for i := len(flag) - 1; i > 0; i-- {
		if flag[i] == '.' {
			if j, ok := s.byFlag[flag[:i]]; ok {
				return j, false
			}
		}
	}
	return -1, false
}

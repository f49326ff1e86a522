package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// bbolt's page layout (format version 2): a 16 byte header (page id,
// flags, element count, overflow page count), then the elements. A branch
// element is its key's offset and size and the child's page id; a leaf
// element is its flags, its key's offset and size and its value's size
// (the value follows the key). A leaf element flagged as a bucket holds
// the nested bucket's root page id and sequence, and for an inline bucket
// (root 0) the bucket's own leaf page right after them. A freelist page's
// elements are page ids; a count of 0xFFFF means the real count is the
// first id slot.
const (
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	elementSize      = 16
	bucketHeaderSize = 16
	noFreelist       = ^uint64(0)
	// maxTreeDepth bounds a walk down the nested B+trees: bbolt's own
	// trees of a few million keys are a handful of levels deep, and nested
	// buckets add a level each.
	maxTreeDepth = 256
)

// errPageLayout marks a page whose header or elements point where no
// valid database would.
var errPageLayout = errors.New("damaged page")

// checkPages walks every page reachable from meta m's root bucket, and the
// freelist, before bbolt reads any of them. bbolt trusts the page ids it
// finds: a damaged child page id that points back up the tree makes its
// cursors descend forever (memory grows until the process dies), a
// damaged freelist makes it loop or hand out pages still in use (the next
// commit then links a page into its own subtree), and its own Check
// recurses forever on such a loop. So each page is read once, by id, from
// the file (not through the mapping): its id and kind must match how it
// was reached, every element must lie inside the page, every child id
// below the high-water mark, reached once and not free. The walk is
// bounded by the number of pages in use: it cannot loop.
func checkPages(r io.ReaderAt, pageSize uint64, m metaPage) error {
	if pageSize < pageHeaderSize+metaSize || pageSize > 1<<30 {
		return fmt.Errorf("%w: page size %d", errPageLayout, pageSize)
	}
	w := &pageWalk{r: r, pageSize: pageSize, hwm: m.pgid, seen: map[uint64]bool{0: true, 1: true}}
	if m.pgid < 3 {
		return fmt.Errorf("%w: high-water mark %d", errPageLayout, m.pgid)
	}
	if m.freelist != noFreelist {
		if err := w.readFreelist(m.freelist); err != nil {
			return err
		}
	}
	return w.tree(m.root, "root bucket")
}

// pageWalk is the state of checkPages.
type pageWalk struct {
	r        io.ReaderAt
	pageSize uint64
	hwm      uint64          // pages in use: ids from 0 to hwm-1
	seen     map[uint64]bool // pages reached so far, overflow included
	free     map[uint64]bool // the freelist's pages
}

// page reads page id of a tree or the freelist, with its overflow pages,
// after checking that it is in use and reached for the first time.
func (w *pageWalk) page(id uint64, flags uint16, what string) ([]byte, error) {
	switch {
	case id < 2 || id >= w.hwm:
		return nil, fmt.Errorf("%w: %s points to page %d, outside the %d pages in use", errPageLayout, what, id, w.hwm)
	case w.seen[id]:
		return nil, fmt.Errorf("%w: %s points to page %d, already reached (a loop or a shared page)", errPageLayout, what, id)
	case w.free[id]:
		return nil, fmt.Errorf("%w: %s points to page %d, which the freelist says is free", errPageLayout, what, id)
	}
	buf := make([]byte, w.pageSize)
	if _, err := w.r.ReadAt(buf, int64(id*w.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	ne := binary.NativeEndian
	gotID, gotFlags, overflow := ne.Uint64(buf), ne.Uint16(buf[8:]), uint64(ne.Uint32(buf[12:]))
	switch {
	case gotID != id:
		return nil, fmt.Errorf("%w: page %d (%s) says it is page %d", errPageLayout, id, what, gotID)
	case gotFlags&flags == 0 || gotFlags&^(branchPageFlag|leafPageFlag|freelistPageFlag) != 0 ||
		gotFlags&(gotFlags-1) != 0:
		return nil, fmt.Errorf("%w: page %d (%s) has page flags %#x", errPageLayout, id, what, gotFlags)
	case overflow >= w.hwm-id:
		return nil, fmt.Errorf("%w: page %d (%s) claims %d overflow pages, past the %d pages in use", errPageLayout, id, what, overflow, w.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i] || w.free[i] {
			return nil, fmt.Errorf("%w: overflow of page %d (%s) covers page %d, which is in use elsewhere", errPageLayout, id, what, i)
		}
		w.seen[i] = true
	}
	if overflow > 0 {
		buf = make([]byte, (overflow+1)*w.pageSize)
		if _, err := w.r.ReadAt(buf, int64(id*w.pageSize)); err != nil {
			return nil, fmt.Errorf("read page %d: %w", id, err)
		}
	}
	return buf, nil
}

// readFreelist reads the freelist page at id into w.free.
func (w *pageWalk) readFreelist(id uint64) error {
	buf, err := w.page(id, freelistPageFlag, "the freelist")
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	n, start := uint64(ne.Uint16(buf[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF {
		n, start = ne.Uint64(buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > (uint64(len(buf))-start)/8 {
		return fmt.Errorf("%w: freelist page %d claims %d free pages, more than it holds", errPageLayout, id, n)
	}
	w.free = make(map[uint64]bool, n)
	for i := range n {
		p := ne.Uint64(buf[start+8*i:])
		switch {
		case p < 2 || p >= w.hwm:
			return fmt.Errorf("%w: freelist page %d lists page %d, outside the %d pages in use", errPageLayout, id, p, w.hwm)
		case w.free[p]:
			return fmt.Errorf("%w: freelist page %d lists page %d twice", errPageLayout, id, p)
		case w.seen[p]:
			return fmt.Errorf("%w: freelist page %d lists itself as free", errPageLayout, id)
		}
		w.free[p] = true
	}
	return nil
}

// tree checks the B+tree whose root page is root, and the trees of the
// buckets nested in it.
func (w *pageWalk) tree(root uint64, what string) error {
	type ref struct {
		id    uint64
		depth int
		what  string
	}
	stack := []ref{{root, 0, what}}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r.depth > maxTreeDepth {
			return fmt.Errorf("%w: page %d (%s) is %d levels deep", errPageLayout, r.id, r.what, r.depth)
		}
		buf, err := w.page(r.id, branchPageFlag|leafPageFlag, r.what)
		if err != nil {
			return err
		}
		children, err := w.elements(buf, fmt.Sprintf("page %d", r.id))
		if err != nil {
			return err
		}
		for _, c := range children {
			stack = append(stack, ref{c, r.depth + 1, fmt.Sprintf("page %d", r.id)})
		}
	}
	return nil
}

// elements checks the elements of a branch or leaf page (or of an inline
// bucket's page, held in a leaf value), and returns the page ids they
// point to: the children of a branch page, the roots of the buckets in a
// leaf page.
func (w *pageWalk) elements(buf []byte, what string) ([]uint64, error) {
	ne := binary.NativeEndian
	if len(buf) < pageHeaderSize {
		return nil, fmt.Errorf("%w: %s is %d bytes, shorter than a page header", errPageLayout, what, len(buf))
	}
	flags, count := ne.Uint16(buf[8:]), uint64(ne.Uint16(buf[10:]))
	end := uint64(len(buf))
	if pageHeaderSize+count*elementSize > end {
		return nil, fmt.Errorf("%w: %s claims %d elements, more than it holds", errPageLayout, what, count)
	}
	var ids []uint64
	for i := range count {
		off := pageHeaderSize + i*elementSize
		e := buf[off : off+elementSize]
		switch flags {
		case branchPageFlag:
			pos, ksize := uint64(ne.Uint32(e)), uint64(ne.Uint32(e[4:]))
			if off+pos+ksize > end {
				return nil, fmt.Errorf("%w: %s: key %d lies past the page's end", errPageLayout, what, i)
			}
			ids = append(ids, ne.Uint64(e[8:]))
		case leafPageFlag:
			eflags, pos, ksize, vsize := ne.Uint32(e), uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
			if off+pos+ksize+vsize > end {
				return nil, fmt.Errorf("%w: %s: value %d lies past the page's end", errPageLayout, what, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			v := buf[off+pos+ksize : off+pos+ksize+vsize]
			if len(v) < bucketHeaderSize {
				return nil, fmt.Errorf("%w: %s: bucket %d has a %d byte header", errPageLayout, what, i, len(v))
			}
			if root := ne.Uint64(v); root != 0 {
				ids = append(ids, root)
				continue
			}
			// An inline bucket: its leaf page is in the value, and holds
			// no nested bucket (bbolt inlines only buckets without any).
			inline := v[bucketHeaderSize:]
			if len(inline) < pageHeaderSize || ne.Uint16(inline[8:]) != leafPageFlag {
				return nil, fmt.Errorf("%w: %s: inline bucket %d is not a leaf page", errPageLayout, what, i)
			}
			nested, err := w.elements(inline, fmt.Sprintf("%s, inline bucket %d", what, i))
			if err != nil {
				return nil, err
			}
			if len(nested) > 0 {
				return nil, fmt.Errorf("%w: %s: inline bucket %d holds a bucket", errPageLayout, what, i)
			}
		default:
			return nil, fmt.Errorf("%w: %s has page flags %#x", errPageLayout, what, flags)
		}
	}
	if flags == branchPageFlag && count == 0 {
		return nil, fmt.Errorf("%w: %s is a branch page without children", errPageLayout, what)
	}
	return ids, nil
}

/*
 * Search filters (RFC 4511 4.5.1.7): decoded from BER (ber_in.h) into a tree
 * whose assertion values are already in their attribute's normal form, then
 * evaluated with three-valued logic against entries in stored BER form.
 *
 * Memory: a tree's nodes and values live in an arena of the caller's (arena.h), so
 * decoding one costs no malloc per node and it is freed with the arena in one step.
 *
 * Supported: and, or, not, equalityMatch, substrings, greaterOrEqual,
 * lessOrEqual, present, approxMatch (evaluated as equality) and
 * extensibleMatch with an equality rule (caseIgnoreMatch, caseExactMatch, ...),
 * an ordering rule (values below the assertion match), :dn: and Active Directory's in-chain rule
 * (LDAP_MATCHING_RULE_IN_CHAIN, FILTER_IN_CHAIN_OID: see struct filter's chain). With a schema
 * loaded, attribute names resolve through it and each item uses the attribute's own equality,
 * ordering or substrings rule; an item the rule cannot decide (no such rule, unknown attribute or
 * matching rule, a value not valid for the rule) is Undefined (RFC 4511 4.5.1.7). Nesting is
 * limited to FILTER_MAX_DEPTH levels; a deeper filter is a protocol error.
 *
 * Schema hierarchies, as slapd: an item on a type with subtypes also tests the subtypes' values
 * ("(name=x)" matches a cn or sn of x, RFC 4511 4.5.1.7), and an objectClass equality, approximate
 * or extensible match without a named rule holds for every subclass of the class asserted
 * ("(objectClass=person)" matches an inetOrgPerson, RFC 4512 2.4.1).
 *
 * Layering: uses match.h (DN-valued items through it) and schema.h, below it; request.h
 * uses it. Files: filter_decode.c, filter_eval.c, filter_memo.c, filter_string.c.
 * Thread rules: a tree is immutable once built (but for the ID set a search attaches to each
 * in-chain item once, before it evaluates the tree: filter_chain_set), so threads may
 * evaluate one tree at once, each with its own scratch buffer; decoding and
 * evaluation read the schema (not while it is loaded or freed, schema.h).
 */
#ifndef MINIDIR_PROTOCOL_FILTER_H
#define MINIDIR_PROTOCOL_FILTER_H

#include <lber.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/arena.h"
#include "protocol/attr_gate.h"
#include "protocol/ber_in.h"
#include "protocol/buf.h"
#include "protocol/match.h"
#include "protocol/schema.h"

#define FILTER_MAX_DEPTH 64
/* Pieces (initial, any, final) one substrings assertion may have; more is a protocol error.
 * Each piece is searched for in every value the item tests, so the bound keeps one item's
 * cost per value small (max_filter_items bounds a search's pieces in all, filter_weight). */
#define FILTER_MAX_PIECES 64

enum filter_kind {
	FILTER_AND,
	FILTER_OR,
	FILTER_NOT,
	FILTER_EQ,
	FILTER_SUBSTR,
	FILTER_GE,
	FILTER_LE,
	FILTER_PRESENT,
	FILTER_APPROX,
	FILTER_EXT
};

/* LDAP_MATCHING_RULE_IN_CHAIN (Active Directory): membership through any chain of groups. */
#define FILTER_IN_CHAIN_OID "1.2.840.113556.1.4.1941"

/*
 * What an in-chain item asks (struct filter's chain): FILTER_CHAIN_MEMBERS on memberOf, the
 * entries inside the group asserted (its members, the members of the groups among them, and
 * so on); FILTER_CHAIN_GROUPS on member or uniqueMember, the groups the entry asserted is
 * inside. Both follow the membership minidir's memberOf follows (a member or uniqueMember value
 * naming an entry, storage/memberof.h), whichever of the two types the item names.
 */
enum filter_chain { FILTER_CHAIN_NONE, FILTER_CHAIN_MEMBERS, FILTER_CHAIN_GROUPS };

/* Result of evaluating a filter (RFC 4511 4.5.1.7). */
enum filter_result { FILTER_FALSE = 0, FILTER_TRUE = 1, FILTER_UNDEFINED = 2 };

struct filter_value {
	char *val; /* normal form, NUL-terminated, in the tree's arena */
	size_t len;
};

struct filter {
	enum filter_kind kind;
	struct filter *child; /* and/or: first operand; not: the operand */
	struct filter *next;  /* next operand of the enclosing and/or */
	char *attr;           /* lowercased attribute description, in the tree's arena */
	size_t attr_len;
	enum match_rule rule;
	const struct schema_attr *supertype; /* the type has subtypes, whose values count too */
	const struct schema_oc *oc;          /* objectClass: a class whose subclasses match too */
	bool invalid;                        /* assertion not valid for the rule: Undefined */
	bool dn_attrs;             /* extensible match: the entry's DN attributes count too */
	bool ext_ordering;         /* extensible match with an ordering rule: value < assertion */
	struct filter_value value; /* eq, ge, le, approx */
	struct filter_value initial, final; /* substrings (len 0 and val NULL if absent) */
	struct filter_value *any;
	size_t nany;
	/* Substrings: the work units one value costs beyond the first (filter_ctx's work), one a
	 * piece and one per 64 bytes of pieces, set by filter_decode; 0 for other kinds. */
	uint32_t piece_units;
	uint32_t id; /* filter_decode numbers a tree's nodes 0.. in preorder (struct filter_memo) */
	/*
	 * An in-chain extensible item (FILTER_IN_CHAIN_OID) on memberOf, member or uniqueMember
	 * whose assertion is a DN (value: its normal form, rule MATCH_DN); FILTER_CHAIN_NONE for
	 * every other item (an in-chain item on another type, or whose value is not a DN, is
	 * invalid: Undefined). Its answer is a set of entry IDs the search computes once, in its
	 * read transaction, before it evaluates (filter_chain_set): until then the item is
	 * Undefined (an access rule's or the assertion control's filter, which no search resolves).
	 */
	enum filter_chain chain;
	struct filter_value chain_key; /* the assertion's reversed DN key (dn.h), for dn2id */
	bool chain_set;                /* chain_ids holds the answer */
	const uint32_t *chain_ids;     /* ascending, no duplicates (borrowed, the search's) */
	size_t chain_n;
};

/*
 * Decodes the Filter element at in (client bytes; in advances past it on success and is
 * unchanged on failure). Nodes and values go into mem (the caller's: the tree lives as long
 * as the arena's pieces do, and borrows nothing from the input); values are normalized in
 * scratch first (a reusable work buffer of the caller's, its contents overwritten).
 * Returns the tree; NULL on malformed input (ber_in.h's rules; an element that holds more
 * than its syntax is malformed too), nesting deeper than FILTER_MAX_DEPTH or out of memory
 * (what was taken from mem stays there until the arena is reset).
 */
struct filter *filter_decode(struct ber_in *in, struct arena *mem, struct buf *scratch);
/*
 * A leaf built without BER, for operations that test one assertion (compare):
 * FILTER_EQ on attr with value, or FILTER_PRESENT on attr (value ignored), decoded
 * as filter_decode would, into mem with scratch as there. attr and value are borrowed.
 * Returns it or NULL: empty attr, another kind, or out of memory.
 */
struct filter *filter_make(enum filter_kind kind, const struct berval *attr,
                           const struct berval *value, struct arena *mem, struct buf *scratch);

/*
 * Evaluates f against attrs[0..len) (borrowed), the content of a
 * PartialAttributeList (a sequence of SEQUENCE { type, SET OF value }), as
 * storage keeps it. scratch is a reusable work buffer owned by the caller
 * (its contents are overwritten). Returns FILTER_TRUE, FILTER_FALSE or
 * FILTER_UNDEFINED; malformed attributes never match (no error is returned).
 */
enum filter_result filter_eval(const struct filter *f, const unsigned char *attrs, size_t len,
                               struct buf *scratch);

/*
 * What an evaluation of one entry cut by its budget has decided so far, so that evaluating
 * the same entry again resumes it (a search splits a costly entry across slices this way):
 * a byte per node of a filter_decode tree, by its id. Owned by the caller (its bytes in the
 * caller's arena); cleared before another entry is evaluated with it.
 */
struct filter_memo {
	unsigned char *known; /* per node: 0 unknown, else 1 + its enum filter_result */
	size_t n;             /* nodes (filter_items); 0: no memo (a filter too small to cut) */
	bool used;            /* something is remembered: filter_memo_clear has work to do */
	/* Where the evaluation stops once it has decided a node it did not know (an absolute
	 * *work, below work_limit; 0: none). */
	uint64_t yield;
};

/* Filters with fewer items than this get no memo: one leaf is never split, and a memo
 * would cost an indexed lookup's filter something for nothing. */
#define FILTER_MEMO_MIN_ITEMS 3

/* Sets m up for f (a filter_decode tree) with its bytes from mem; with fewer than
 * FILTER_MEMO_MIN_ITEMS items m->n is 0 and nothing is taken. Returns 0, or -1 out of memory
 * (m has no memo then). */
int filter_memo_init(struct filter_memo *m, const struct filter *f, struct arena *mem);
/* True if the last evaluation of f with m decided f itself (its result holds; false: it was
 * cut, evaluate again to resume), or m has no memo. Pure. */
bool filter_memo_done(const struct filter_memo *m, const struct filter *f);
/* Forgets what m remembers (before the next entry). */
void filter_memo_clear(struct filter_memo *m);

/* Attaches to an in-chain item f (f->chain not FILTER_CHAIN_NONE) its answer: the entry IDs
 * ids[0..n), ascending without duplicates, borrowed (they must outlive every evaluation of
 * f). An entry then matches f when its ID (struct filter_ctx's id) is one of them. */
void filter_chain_set(struct filter *f, const uint32_t *ids, size_t n);

/* What evaluation may need beyond the attributes. */
struct filter_ctx {
	const unsigned char *dn; /* the entry's DN, for extensible matches with :dn: */
	size_t dnlen;
	uint32_t id; /* the entry's ID (storage's entry_id), for in-chain items; 0: none */
	/* Attributes the client may search (attr_gate.h), or NULL for all. A filter item on a
	 * type the gate refuses is Undefined, as is an item whose subtypes it refuses unless
	 * another value makes it true (slapd's rule for search access). */
	const struct attr_gate *gate;
	const unsigned char *extra; /* more attributes (computed operational ones), or NULL */
	size_t extra_len;
	struct buf *scratch;
	/*
	 * The work of evaluating, or NULL (not counted, no limit): one unit per filter item (and,
	 * or, not and leaf) tested and one per value or DN AVA an item compares (12 under a DN
	 * rule, whose normalization costs that much more; a substrings item one more per piece and
	 * per 64 bytes of its pieces: struct filter's piece_units), so that a unit costs about the
	 * same whatever the filter (a search slices and bounds its work by it). The evaluation adds
	 * what it did to *work; once *work passes work_limit (0: none) every item still to test is
	 * Undefined, so the evaluation ends within a value (12 units) of it (the caller then sees
	 * *work > work_limit and the result means nothing).
	 */
	uint64_t *work;
	uint64_t work_limit;
	/*
	 * With work counted, a memo (or NULL) splits one entry's evaluation: a node it knows
	 * costs 1 unit and gives its result again; a node evaluated to its end is remembered;
	 * once one node is newly decided, passing memo->yield stops the evaluation as work_limit
	 * does (nothing cut is remembered). So each call decides at least one node more (at most
	 * a leaf's work past the yield point), and calls until filter_memo_done give the result
	 * one call without limits would.
	 */
	struct filter_memo *memo;
};

/* filter_eval with the entry's DN, extra attributes and an attribute gate (struct filter_ctx,
 * borrowed for the call); ctx->scratch must not be NULL. An entry's DN is parsed once for
 * all the :dn: items of f. */
enum filter_result filter_eval_ctx(const struct filter *f, const unsigned char *attrs, size_t len,
                                   const struct filter_ctx *ctx);

/*
 * The Matched Values control (RFC 3876): decodes the ValuesReturnFilter at in, a SEQUENCE OF
 * SimpleFilterItem, into a list of leaf items linked by next, as filter_decode does (mem,
 * scratch, in). Returns it; NULL when malformed, empty, or an item is an and, or or not
 * (RFC 3876: a protocol error), or out of memory.
 */
struct filter *filter_decode_values(struct ber_in *in, struct arena *mem, struct buf *scratch);

/*
 * True if some item of items (a filter_decode_values list) holds for the value v[0..vlen) of
 * the stored attribute type t[0..tlen): the item names the type (or a supertype; an
 * extensible item without a type names every type) and its assertion is TRUE on the value
 * (a present item on any value); an in-chain item, which tests entries, holds for none. All
 * borrowed; scratch as for filter_eval.
 */
bool filter_values_match(const struct filter *items, const unsigned char *t, size_t tlen,
                         const unsigned char *v, size_t vlen, struct buf *scratch);

/* The items of f and the filters after it (f->next): every and, or, not and leaf node (the
 * nodes a filter_memo has). Pure; 0 for NULL. */
size_t filter_items(const struct filter *f);
/* What max_filter_items counts of f and the filters after it: filter_items, with each piece of
 * a substrings assertion beyond its first counted as an item more ("(cn=a*b*c)" is 3), since
 * each piece is one more search through every value tested. Pure; 0 for NULL. */
size_t filter_weight(const struct filter *f);

/* True if f, an operand, or a filter after it (f->next) names one of the attributes
 * names[0..n) (NUL-terminated; the whole description, ASCII case ignored) to read its
 * values: an in-chain item, answered by entry IDs, names none. lens has bit (len % 64)
 * set for the length len of each name (FILTER_NAME_LEN_BIT), so that an item whose
 * description is of no such length is passed over at once. Pure. */
bool filter_uses(const struct filter *f, const char *const *names, size_t n, uint64_t lens);
/* The bit of lens (filter_uses) for a name len bytes long. */
#define FILTER_NAME_LEN_BIT(len) (UINT64_C(1) << ((len) % 64))

/* Appends f in RFC 4515 string form to out (for logs), followed by a NUL that out->len does
 * not count; when memory runs out the text is cut short, perhaps unterminated (no error).
 * Values are their normal forms, but an objectClass value the schema knows is its class's
 * first NAME, not the OID objectIdentifierMatch makes of it (reads the schema, as decoding
 * does). Values escape '"' and control bytes as \XX too, so the text fits in a quoted log
 * field. */
void filter_to_string(const struct filter *f, struct buf *out);

/* Parses text, an RFC 4515 string filter (NUL-terminated; the outer parentheses may be left
 * out, as ldapsearch allows), with libldap's parser, into mem (as filter_decode). Returns the
 * filter, or NULL when text is not a filter or memory ran out. For configuration (access
 * rules), not for the hot path. */
struct filter *filter_from_string(const char *text, struct arena *mem);
/* True if filter_from_string takes text (a config file's filter, checked when it is read). */
bool filter_string_valid(const char *text);

#endif

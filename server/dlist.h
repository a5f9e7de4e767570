/*
 * Intrusive doubly linked lists: a node type with prev and next pointers, and a head
 * pointer to the first node (NULL: empty). Connections of a worker and pages of a
 * slab are kept this way. Macros, because the two node types differ; each evaluates
 * its arguments more than once, so pass plain lvalues.
 */
#ifndef MINIDIR_SERVER_DLIST_H
#define MINIDIR_SERVER_DLIST_H

/* Puts node first in the list at head. */
#define DLIST_PUSH(head, node)                                                                     \
	do {                                                                                       \
		(node)->prev = NULL;                                                               \
		(node)->next = (head);                                                             \
		if (head)                                                                          \
			(head)->prev = (node);                                                     \
		(head) = (node);                                                                   \
	} while (0)

/* Takes node out of the list at head; its own links are left as they were. */
#define DLIST_UNLINK(head, node)                                                                   \
	do {                                                                                       \
		if ((node)->prev)                                                                  \
			(node)->prev->next = (node)->next;                                         \
		else                                                                               \
			(head) = (node)->next;                                                     \
		if ((node)->next)                                                                  \
			(node)->next->prev = (node)->prev;                                         \
	} while (0)

#endif

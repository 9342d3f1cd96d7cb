/* The name of a lexbor tag id, read from lexbor's own static table (standard tags) or from the
 * tag data a custom tag's id points to: what lxb_tag_name_by_id does, without calling into the
 * selectolax extension, whose lexbor symbols are not visible to other modules. */
#include "lexbor/html/html.h"
#include "lexbor/tag/res.h"

static inline const lxb_char_t *
sc_tag_name(uintptr_t tag_id, size_t *len)
{
    const lxb_tag_data_t *data;
    if (tag_id >= LXB_TAG__LAST_ENTRY) {
        if (tag_id == LXB_TAG__LAST_ENTRY) {
            *len = 0;
            return NULL;
        }
        data = (const lxb_tag_data_t *) tag_id;
    }
    else {
        data = &lxb_tag_res_data_default[tag_id];
    }
    *len = data->entry.length;
    return lexbor_hash_entry_str(&data->entry);
}

#include "lexbor/dom/interfaces/attr.h"

/* Whether a lexbor attribute id names the attribute `name` (lower case, `length` bytes). An id
 * past the standard ones is the address of the document's entry for that name, which holds
 * it lower-cased; standard ids are never asked for here (`hidden` and `open` are not among
 * them), so they answer no. */
static inline int
sc_attr_is(uintptr_t attr_id, const char *name, size_t length)
{
    const lxb_dom_attr_data_t *data;
    if (attr_id <= LXB_DOM_ATTR__LAST_ENTRY) {
        return 0;
    }
    data = (const lxb_dom_attr_data_t *) attr_id;
    return data->entry.length == length
        && memcmp(lexbor_hash_entry_str(&data->entry), name, length) == 0;
}

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

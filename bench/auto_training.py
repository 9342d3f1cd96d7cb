"""How the `auto` labeller and the content-loss guard were chosen (issue 38), on training pages
only, out of fold; and the fold labellers that let `bench/quality.py` score the 2026 pages out
of fold.

Training pages: CleanEval dev (58), the Dragnet train split (968), the 50 GoogleTrends train
pages rebuilt from their rows (`bench/googletrends_pages.py`) and the 460 pages of 2026
(`modern2026`). Every page is cut, scored and featured as `stream-cleaner train-labeller`
does (`stream_cleaner.training`), and the pages of all four sets are split into five folds by
their site's registered domain (`training.page_group`), so that no site is on both sides.

The rule, fixed before any test figure (CleanEval test, the Dragnet test split, GoogleTrends
test, the multilingual sets) was read:
1. Each candidate is scored by its out-of-fold macro word-alignment F1 on each of the four
   sets, at the threshold that gives the best mean of the four (`choose_threshold`'s
   ``per_source``); the candidate with the highest mean wins. Candidates: the class and id
   words with the page-structure features, stacked, with the article labeller's tree
   parameters (31 leaves, depth 7, 100 trees) or larger ones (63 leaves, depth 8, 150 trees).
2. The guard's settings are chosen on the winner's out-of-fold decisions, among
   ``MIN_RUN_WORDS`` 100 / 200 and ``MIN_KEPT_SHARE`` 0.2 / 0.35 / 0.5. As first written, the
   rule took the highest mean of the four sets' macro F1 and shipped the guard only if it did
   not lower that mean; every setting lowered it (by 0.0007 to 0.0026), so as written it
   would ship none. But the guard is for the pages that lose their main content, which a
   mean of F1 hardly sees, so the rule became, before any test figure was read: the fewest
   pages of lost main content over the four sets (`evaluate.lost_main_content` against
   trafilatura's output on the same page, ``--peer-outputs``), ties broken by the mean F1,
   shipped if the mean F1 drops by less than 0.002 (`guard` prints both).
   Later (2026-11-29), by the same rule: what the guard keeps when it steps in, the run's prose
   blocks (shipped) or also every block of the page's main element (`page_structure`'s
   ``main_in``, comment-marked blocks left out): `guard --what main`. It loses one page fewer
   (5) but costs 0.0035 of the mean against no guard, so it is not shipped. Then, by the
   same rule, what no run of prose is taken from (`GUARD_OUTSIDE`, each with the six
   settings): comment-marked parts only, or also `nav`/`aside`/`footer` elements, the nav,
   sidebar and footer class words, overlays and legal notices; the last is shipped. With
   those left out, keeping the main element too passes the rule (4 pages lost, 0.0015 of the
   mean): shipped for the labellers that read the page's structure (`--what main`, default).
3. Reported, not chosen: the same without the stage-two stack, without the structure
   features, and without the language model's perplexity features (set to the value a page
   without a model gets), to say what each part contributes.
4. Reported (2026-11-29, `without-model`): the winner on pages in a language without a model,
   out of fold on the training pages scored as if no model existed (every sentence at the
   neutral perplexity the pipeline gives them), beside a twin trained that way and one
   labeller trained on both (each page twice). Reported only, no rule fixed beforehand: had
   either beaten the shipped labeller without a model, a rule would have been needed first.
5. Reported (2026-11-29, `across-sets`): each candidate trained on three sets and scored on
   the fourth, as on a benchmark this project does not hold. Fixed before its figures were
   read: should the other candidate's mean over the four held-out sets (guarded) beat the
   shipped one's, the shipped candidate changes to it.
   Then reported only (`EXPLORED`, no rule: chosen after rule 5's figures were read), the
   shipped trees with the four sets weighing the same, and more regularised trees.
6. Written 2026-11-29 before its figures were read (`main-trigger`): a second trigger for
   the guard, the page's main element. With each set held out, the shipped guard misses most
   lost pages because their main content is no run of prose it counts (a thread's posts in
   comment-marked markup, a product's or documentation page's short blocks). The candidate:
   when the main element's prose (`page_structure.is_prose` blocks inside it) holds at least
   W words (100 / 200) and the decision keeps less than S of them (0.2 / 0.35 / 0.5), keep K:
   the main element's prose blocks, every block of it, or every block of it outside the
   parts the shipped guard leaves out. Scored on the shipped candidate's decisions with each
   set held out (rule 5's), the shipped guard applied first. Among the variants whose mean
   F1 over the four held-out sets drops by at most 0.002 and whose site-fold mean F1 drops by
   less than 0.002 (against the shipped guard alone), the fewest pages of lost main content
   over the four held-out sets wins, ties broken by the held-out mean F1; none shipped if no
   variant loses fewer pages than the shipped guard alone.
   Rule 6 chose 100 words, half, every block outside the left-out parts (23 pages lost
   against 25; held-out mean 0.7881 against 0.7855; site folds 0.8557 against 0.8572). The
   variants that keep comment-marked blocks lost 12 but cost the site folds 0.015-0.022:
   on Dragnet pages whose main element is the readers' comments, the labeller keeps the
   article and rightly drops the comments, and the trigger took them back.
7. Written 2026-11-29 after rule 6's figures were read (training pages only), before its own:
   the same trigger, but counting what the decision keeps of prose over the whole page, not
   in the main element alone: it fires when the page's kept prose is less than P (0.2 / 0.25
   / 0.35) of the main element's prose (of W words, 100 / 200), keeping the main element's
   prose blocks or every block of it (`guard.MAIN_KEPT_FROM` ``page``). An article kept
   beside a dropped thread of comments no longer fires it; a page kept of a title and a date
   does. Chosen as in rule 6, among rule 6's variants and these.
   No variant of rule 7 passes: counted over the page, the trigger still fires on Dragnet
   pages whose short article is kept beside a thread of comments fifty times its length
   (site folds 0.8469-0.8489). Rule 6's variant is shipped (`guard.MAIN_MIN_WORDS`).
8. Written 2026-11-29 after rules 6 and 7's figures were read (training pages only), before
   its own: rule 6's trigger as shipped, but when the decision keeps less than N words of
   prose over the whole page (25 / 50 / 100 / 150: a page kept down to a title, a date and a
   line or two), it keeps every block of the main element, comment-marked ones too: a thread
   kept down to nothing gets its posts back, an article kept beside its comments does not.
   Chosen as in rule 6, against the shipped guard (rule 6's trigger included): among the
   variants whose held-out mean drops by at most 0.002 and site-fold mean by less than 0.002,
   the fewest pages lost with a set held out, ties broken by that mean; none if none loses
   fewer than the shipped guard.
   Chosen: 50 words (19 pages lost against 23; held-out mean 0.7907 against 0.7881, site
   folds 0.8547 against 0.8557); 25 words loses as many, at a held-out mean lower in the
   fifth decimal.
9. Written 2026-11-29 (17:25) after rules 6-8's figures were read, and after the Dragnet test
   figure with them (0.952 to 0.934), before its own: rules 6 and 8 bounded the mean of the
   four sets, and the site folds showed Dragnet train alone paying (0.9199 to 0.9056): an
   article kept beside a thread of readers' comments still fires rule 6's trigger, whose main
   element is the thread. The candidate: rule 6's trigger fires only when the decision also
   keeps fewer than A words of prose (100 / 200 / 300 / 500), counted in the main element or
   over the whole page (`guard.MAIN_MAX_KEPT_FROM`); rule 8's part is unchanged. The base is
   the guard without a second trigger (rule 6's base). A variant passes when, on each of the
   four sets, neither its site-fold F1 nor its held-out F1 is more than 0.002 below the
   base's; among those passing (the base, the shipped rules 6 and 8 and the eight variants),
   the fewest pages of lost main content with a set held out wins, ties broken by the
   held-out mean. The winner is shipped, even if it is the base.
   No variant passed (Dragnet train's site folds lose 0.010 to 0.014 with each): the second
   trigger is off.
10. Written 2026-11-29 (17:41) after rule 9's figures were read, before its own: rules 6 and
   8's trigger as they chose it, firing only on pages whose type (`page_types`) is not an
   article: a forum's posts and a product's specifications are their content, an article's
   readers' comments are not. Variants by the types it fires on: every type but article;
   but article and service; forum alone. The page-type model learnt the 2026 pages only, so
   their types here come from models trained without the page's site fold (`page_types`'s
   recipe, `bench/page_types.py`), the other sets' from the shipped model. Chosen as in rule
   9 (each set within 0.002 of the guard without a second trigger, held out and in the site
   folds; then the fewest pages lost with a set held out, ties broken by its mean); the
   winner is shipped, even if it is the base.
   No variant passed: the page-type model calls 85 of the 968 Dragnet train pages forums,
   and even fired on forums alone the trigger costs Dragnet train 0.004 in the site folds.
11. Written 2026-11-29 (17:58) after rule 10's figures and a count of the comment-marked
   blocks the decisions keep (training pages only: with Dragnet train held out, 458 of its
   pages keep some, 1 % of their words in the gold; in the site folds 35 pages, and 22 of
   the 2026 pages, 75 % in the gold), before its own: the decision drops the comment-marked
   blocks it keeps (`parse` class words, group ``comment``) when it also keeps at least N
   words of prose (`page_structure.is_prose`) outside them (50 / 100 / 200 / 400): an
   article is kept, its readers' comments go; a thread kept only in its posts keeps them.
   Applied before the guard. Chosen as in rule 9 (each set within 0.002 of the shipped
   decisions, held out and in the site folds; then the fewest pages lost with a set held
   out, ties broken by its mean); the winner is shipped, even if it is the base.
   Chosen: 400 words (the smaller counts cost the 2026 pages 0.002-0.004 in the site folds):
   held-out mean 0.7960 against 0.7855 (Dragnet train 0.7648 against 0.7240), the same 25
   pages lost; in the site folds no set moves by more than 0.0002 (`guard.drop_comments`).
12. Written 2026-11-29 (18:18) after rule 11's figures, before its own: rule 11's limit by the
   page's type (rule 10's page types, out of fold on the 2026 pages): A words of prose kept
   outside the comments on pages whose type is article (50 / 100 / 200), 400 on the others.
   Chosen as in rule 9 against rule 11's decisions (each set within 0.002 of them, held out
   and in the site folds; then the fewest pages lost with a set held out, ties broken by
   its mean); the winner is shipped, even if it is the base.
   Chosen: 200 words on articles (`guard.COMMENTS_BESIDE_ARTICLE_WORDS`): every variant
   passes; 200 loses 25 pages as rule 11 does, 50 and 100 one more. Held-out mean 0.7989
   against 0.7960 (Dragnet train 0.7766 against 0.7648); site folds: Dragnet train 0.9211
   against 0.9199, no other set moves.
13. Written 2026-11-29 (19:19), before its figures: the guard and rules 11-12 count a
   block's words as `page_structure.is_prose` already does, so that they act on pages written
   without spaces (Chinese, Japanese, Thai), where white-space words are a handful per block:
   a block mostly of non-ASCII characters counts its characters over four
   (`MIN_PROSE_CHARS_CJK` characters make `MIN_PROSE_WORDS` words) when that is more than its
   white-space words. No constant is chosen. No training page is written that way (the gold
   of none of the 1,536 is mostly non-ASCII), so nothing here can choose it: its only
   figures are test figures, MultiBoilerNet's Chinese, Japanese and Thai rows
   (`bench/multilingual_pipeline.py --mode auto`), read once. Shipped unless one of those
   three loses more than 0.005 against the tree before, or a training or test set in Latin
   script moves by more than 0.001 (a check, not a choice among variants).
   Shipped: Chinese 0.830 -> 0.831, Japanese and Thai unchanged; `auto`'s output changes on
   1 of 2,583 Latin-script pages (a Dragnet test page: its set -0.0003), `corpus`'s on none.
14. Written 2026-11-29 (19:31) after rule 12's held-out lost pages were read (training pages
   only: on the 2026 pages a forum's posts sit under a wrapper named "...withSidebar" and a
   reply container, so the guard leaves the whole thread out of its run), before its own
   figures: the guard leaves a block out for a part's class or id word only when the nearest
   element so named lies below the page's main element (`page_structure`; `auto` only):
   a name on the main element or an element around it is the layout's, not a part beside the
   main content. Variants: (a) for every group of `guard.OUTSIDE_GROUPS`; (b) for all but
   ``comment`` (an article's comment thread can be the page's main element). Chosen as in
   rule 9 against the shipped decisions (each set within 0.002 of them, held out and in the
   site folds; then the fewest pages lost with a set held out, ties broken by its mean); the
   winner is shipped, even if it is the base.
   Chosen: (b) (`guard.BELOW_MAIN_GROUPS`): held-out mean 0.7998 against 0.7989, 23 pages
   lost against 25 (Dragnet train 4, the 2026 pages 18); site folds 0.8571 against 0.8574, no
   set 0.002 lower. (a) saves 5 pages but costs Dragnet train 0.012 in the site folds.
15. Written 2026-11-29 (19:46) after rule 14's figures, before its own: rule 14's (a) for
   the ``comment`` group on a page whose decision keeps at least as many words of prose
   (`page_structure.is_prose`) inside the main element as outside it: there the kept text is
   itself in the container named for comments (a thread's first post), while an article kept
   beside its readers' comments sits outside them. One variant against rule 14's decisions,
   chosen as in rule 9 (each set within 0.002 of them, held out and in the site folds; then
   the fewest pages lost with a set held out, ties broken by its mean); the winner is
   shipped, even if it is the base.
   Not shipped (`guard.BELOW_MAIN_IN_THREADS` stays empty): it saves 3 of the 2026 pages held
   out (mean 0.8011 against 0.7998) but costs Dragnet train 0.003 in the site folds.
16. Written 2026-11-29 (20:58), after rule 5's reported figures (the four sets weighing the
   same lost 7 fewer of the 2026 pages held out, at the same held-out mean), before its own:
   how the training blocks weigh. The shipped labeller weighs a block by the square root of
   its words, so one page of 2,000 blocks outweighs fifty of forty, and Dragnet's 968 pages
   outweigh the other three sets together; the figure that judges (macro F1) counts each page
   once. Candidates (`WEIGHTS`), the shipped trees each at its own site-fold threshold, with
   the shipped rules after them (11 and 12, then the guard): the shipped weights; ``sets``
   (each set the same total weight: rule 5's ``balanced``); ``pages`` (each page the same
   total weight); ``sets+pages`` (each page the same within its set, each set the same).
   This project is judged on one half of the 2026 benchmark (split by domain, which the site
   folds stand for) and on five benchmarks it does not hold (which a set held out stands
   for), so each candidate's score is J = (its 2026 site-fold F1 + 5 x its held-out mean over
   the four sets) / 6. Among the candidates that lose no more pages with a set held out than
   the shipped weights, the highest J wins if it beats the shipped J by more than 0.002 (two
   runs of one configuration differ by about that); else the shipped weights stay.
   Chosen: ``sets`` (J 0.8102 against 0.7998; held-out mean 0.8126, 19 pages lost against
   23; the 2026 pages in the site folds 0.7985 against 0.8002). ``sets+pages`` came within
   0.0003 (J 0.8099, 21 pages lost); a first run, which scaled the blocks' words instead of
   their weights (a one-word block kept a weight of 1), had put it first (J 0.8073 against
   ``sets`` 0.8010): the two are a tie, and the rule as written took ``sets``.
   Run again after rule 18 (the rules after the decisions as they are now): ``sets`` again
   (J 0.8081 against 0.7985 for words alone; ``sets+pages`` 0.8083, but it loses 21 pages
   against 20).
17. Written 2026-11-29 (21:34), after rule 16's figures, before its own: the threshold. The
   shipped one is the best for the site folds' mean of the four sets (`choose_threshold`),
   which stands for pages like the training ones; rule 16's J weighs what judges this
   project. Candidates: the thresholds from -2 to 1 in steps of 0.25, on the shipped
   candidate's scores (rule 16's ``balanced``), with the shipped rules after them (11 and 12,
   then the guard). Among those losing no more pages with a set held out than the shipped
   threshold, the highest J wins if it beats the shipped threshold's J by more than 0.002;
   else the threshold stays. The winner goes into the shipped labeller's file as it is (the
   trees do not change).
   The threshold stays. These folds choose -0.75 (J 0.8102, 19 pages lost held out); the
   shipped file's own cross-validation (`train-labeller`, whose folds group the pages without
   a URL by their set's folder) chose -1 (J 0.8092, 16 lost), within 0.002 of it. No
   threshold beats either by 0.002: lower ones lose fewer pages (-2: 12) at a lower mean
   (0.7950), higher ones the reverse (-0.25: 0.8137, 26 lost).
18. Written 2026-11-29 (21:40), after rule 17's figures, before its own: rules 11, 12, 14
   and 15 chose on the labeller before rule 16. Each is run again as written on the shipped
   labeller's decisions (rule 16's ``balanced`` at the file's threshold, `--candidate
   balanced --threshold -1`), against the shipped rules; where one now chooses otherwise, its
   new choice is shipped.
   Rule 11 chooses 400 words again. Rule 12 chooses otherwise: every lower limit on articles
   loses one page more with a set held out (16 against 15), so articles take 400 too
   (`guard.COMMENTS_BESIDE_ARTICLE_WORDS`; held-out mean 0.8113 to 0.8083). Then, on that,
   rule 14 chooses (b) again, and rule 15 chooses otherwise: ``comment`` in threads now costs
   no set more than 0.002 (Dragnet train 0.9079 to 0.9065 in the site folds) and raises the
   held-out mean (0.8083 to 0.8087, 15 pages lost either way), so it is shipped
   (`guard.BELOW_MAIN_IN_THREADS`).
19. Written 2026-11-29 (22:45), after rule 18's figures, before its own: the size of the
   trees now that the sets weigh the same. Rule 5 chose the article labeller's trees against
   larger ones when Dragnet outweighed the rest; with the four sets weighing the same the
   trees see as many 2026 and GoogleTrends blocks as Dragnet ones, and may want another
   size. Candidates (`TREE_SHAPES`), each with the sets weighing the same, at its own
   site-fold threshold, the shipped rules after it (11 and 12, then the guard): the shipped
   trees (31 leaves, depth 7, learning rate 0.15, 100 rounds); smaller (15 leaves, depth 5,
   0.15, 100); larger (rule 5's: 63 leaves, depth 8, 0.1, 150); slower (31 leaves, depth 7,
   0.075, 200). Chosen as rule 16 chose (no more pages lost with a set held out than the
   shipped trees, then the highest J if it beats theirs by more than 0.002). A winner with
   more rounds than the shipped trees is shipped only if `bench/core_ab.py` (CleanEval test
   and the 2026 pages, both orders) measures `auto`'s CPU a page within 1.03 of the shipped
   file's: the speed target has no room left.
   The shipped trees stay (J 0.8081, 17 pages lost held out): smaller 0.8008 (22 lost),
   larger 0.8045 (24), slower 0.8027 (19). The larger trees fit the site folds best (0.8596
   against 0.8482) and the sets held out worse: the same trade as rule 5's.
20. Written 2026-11-29 (22:58), after rule 19's figures, before its own: the page's type as
   the second stage's input. With Dragnet train held out, 140,000 of the words the decisions
   keep wrongly lie in comment-marked blocks, where the gold of 2026 articles and Dragnet's
   has almost none and the 2026 threads' gold has their posts: the same markup is content on
   one kind of page and not on the other, and rules 10 and 12 tried to tell them apart after
   the trees. The candidate lets the trees do it: the page's type (rule 10's `page_types`,
   out of fold on the 2026 pages, the shipped model's on the others) as seven 0/1 columns of
   the stacked second stage (``balanced-types``). Chosen as rule 16 chose (no more pages lost
   with a set held out than the shipped labeller, then the highest J if it beats the shipped
   J by more than 0.002). If chosen, the pipeline names the page's type between the two
   stages and the labeller is retrained.
   Not chosen: J 0.8039 against 0.8081. It loses fewer pages with a set held out (14 against
   17) but Dragnet train held out falls (0.7808 against 0.7899), the opposite of what it was
   for: the page-type model calls 85 of those pages forums (rule 10), and their readers'
   comments then pass as a thread's posts. (The bench names the extra columns itself;
   `training.column_names` knows only the shipped labellers' columns.)
21. Written 2026-11-29 (23:13), after rule 20's figures, before its own: which blocks the
   trees learn as content. A block is labelled content when at least half its words align
   with the gold (`training.CONTENT_SHARE`), a value never chosen: a block that mixes a
   paragraph with its byline, or a post with its signature, is content at 0.5 and may not
   be at 0.7. Candidates: 0.3, 0.5 (shipped), 0.7, each with the shipped trees and weights
   at its own site-fold threshold, the shipped rules after it. Chosen as rule 16 chose (no
   more pages lost with a set held out than the shipped labels, then the highest J if it
   beats the shipped J by more than 0.002); a winner is shipped by retraining `auto`.
   Half stays (J 0.8081, 17 pages lost held out): 0.3 gives J 0.8046 (23 lost), 0.7 gives
   0.8015 (16 lost; the 2026 pages held out 0.7569 against 0.7639).
22. Written 2026-11-30 (03:45), before its figures: the labellers' word features
   (``log_words``, ``mean_word_length``, ``words_per_sentence``) count a block's words as
   running text does (`page_structure.prose_words`: its characters over four) when the block
   is mostly non-ASCII and that count is more than twice its white-space words. A Chinese,
   Japanese or Thai paragraph was one "word" of a hundred characters, a URL's shape: a
   synthetic Chinese news page of two paragraphs lost both in `auto` (0 of 5 sentences kept;
   the same page in English keeps them), and the guard, whose run needs 100 words, saw 82.
   Twice, so that spaced scripts (Cyrillic, Greek, Arabic: words of 6 to 8 characters) keep
   their white-space words. 43 of the 342,938 training blocks change (10 pages); the
   labellers are not retrained for them. As with rule 13, no constant is chosen and no
   training page is written that way: the only figures are test figures, MultiBoilerNet's
   Chinese, Japanese and Thai rows (`bench/multilingual_pipeline.py --mode auto`), read once.
   Shipped unless one of the three loses more than 0.005 against the tree before, or a
   Latin-script set (CleanEval test, the Dragnet test split, the 2026 pages) moves by more
   than 0.001 (a check, not a choice among variants).
   Not shipped: Thai loses 0.0055 (0.9096 -> 0.9041), past the 0.005 allowed, while Chinese
   gains 0.0128 (0.8323 -> 0.8450) and Japanese 0.0179 (0.8262 -> 0.8441); the Latin-script
   sets were not run. The candidate (``page_structure.feature_words``, applied to the words
   of both feature paths, native and numpy) was taken out again, and the synthetic page
   still loses both paragraphs. What would decide it honestly is labelled pages in those
   scripts to train and choose on, which this project does not hold.
23. Written 2026-11-30 (04:42), before its figures, after GoogleTrends val's pages were read
   (30 pages BoilerNet kept for validation, in no training or test set here): on one of them
   the guard took `auto`'s output from F1 0.71 to 0.07 (650 words kept, 88 % of the gold, to
   11,555): the page's longest run of prose was not its article, and the guard kept that run
   and the whole main element though the decision had kept the article. The guard is for a
   decision that keeps far less than the page's running text; it counts only what the
   decision keeps inside the run. The candidates step in only when the decision also keeps,
   over the whole page, fewer words of prose (`guard.main_prose`, every prose block it keeps,
   counted by `page_structure.prose_words`) than a share C of the run's words (C = 0.5 or 1)
   or than K words (K = 200 or 400); the shipped guard has neither limit. Scored on the
   shipped labeller's decisions (``balanced`` at the file's threshold, -1) through the shipped
   rules (11 and 12, then the guard), with each set held out and in the site folds. Among the
   candidates whose F1 on each set, held out and in the site folds, is at most 0.002 below
   the shipped guard's, and which lose no more pages with a set held out, the highest
   held-out mean wins; the shipped guard stays if none is higher. GoogleTrends val is
   reported after the choice, not chosen on.
   Not shipped (`guard.PAGE_KEPT_SHARE` and `PAGE_KEPT_WORDS` stay ``None``): every candidate
   raises the site folds' mean (0.8480 to 0.8516-0.8517) but lowers the held-out mean
   (0.8087 to 0.8042-0.8051) and loses 3 to 6 pages more with a set held out (Dragnet train
   and the 2026 pages): on pages unlike its training sets the labeller keeps a few hundred
   words of the wrong prose, and the guard's run is the article. GoogleTrends val would have
   gained 0.721 to 0.743 with any of them (that one page).
24. Written 2026-11-30 (04:44), after rule 23's figures, before its own: on that GoogleTrends
   val page the guard's run alone gives F1 0.53 (1,038 words); keeping the main element too
   gives 0.07 (11,555 words): on a page without a `main` or `article` element the main element
   `page_structure` finds can be most of the page. Rule 2 chose to keep it (4 pages lost
   against 5) on an earlier labeller, in the site folds only. The candidates keep the main
   element too only when it holds less than a share M of the page's words (counted as
   `guard` counts them): M = 0 (the run alone), 0.5 or 0.8; the shipped guard keeps it
   always. Scored and chosen as in rule 23 (the shipped labeller's decisions at -1 through the
   shipped rules, with each set held out and in the site folds; among the candidates no set
   loses more than 0.002 with and that lose no more pages held out, the highest held-out mean;
   the shipped guard stays if none is higher).
   The shipped guard stays (`guard.MAIN_MAX_PAGE_SHARE` ``None``): the run alone and M 0.5
   lose 3 pages more with a set held out (the 2026 pages) and the held-out mean falls (0.8087
   to 0.8041 and 0.8046; the site folds gain 0.002-0.003); M 0.8 changes nothing but one
   CleanEval dev page held out (0.8077). GoogleTrends val: 0.721 with the shipped guard or M
   0.8, 0.736 with the others.
25. Written 2026-11-30 (04:48), after rule 24's figures and a list of the 15 pages lost with a
   set held out (training pages only), before its own figures: another mode's decision, as
   issue 38 suggests. 7 of the 15 keep under 100 words, on pages whose main content is short
   items (listings, collections, service pages): no run of prose and a main element of one
   block, nothing for the guard to go on. The `corpus` labeller (trained on CleanEval dev
   alone, to keep all the well-formed running text of a page) decides otherwise. Candidates:
   when the decision after the shipped rules keeps fewer than W words (white-space words of
   the kept blocks; W = 50, 100 or 200) and the corpus labeller's decision on the same blocks
   keeps at least twice as many, the page keeps every block either decision keeps. The
   corpus labeller is the shipped one: its decisions on Dragnet train, GoogleTrends train and
   the 2026 pages are out of sample; on CleanEval dev, which it learnt, they are not, so there
   the candidates leave `auto`'s decisions as they are. Chosen as rule 23 chose (among the
   candidates no set loses more than 0.002 with, held out and in the site folds, and that
   lose no more pages with a set held out, the highest held-out mean; none if none is higher
   than the shipped rules'). If one is chosen, `auto` runs the corpus labeller on such pages
   and the record says so.
   None is chosen: with a set held out each saves pages and raises the mean (50 / 100 / 200
   words: 14 / 13 / 13 pages lost against 15, mean 0.8098 / 0.8102 / 0.8112 against 0.8087,
   the 2026 pages alone moving), but in the site folds Dragnet train loses 0.003 / 0.012 /
   0.034 (0.9065 to 0.9037 / 0.8948 / 0.8725): where `auto` rightly keeps a short article,
   the corpus labeller keeps its readers' comments and the page's other running text too.
26. Written 2026-11-30 (04:53), after rule 25's figures, before its own: rule 25's candidates,
   but the corpus labeller's blocks join the decision only outside the parts the guard takes
   no run of prose from (`guard.outside`: comment-marked parts, `nav`, `aside` and `footer`
   elements, the nav, sidebar, footer and overlay class words counting only below the main
   element as the guard counts them, legal notices): the readers' comments rule 25 brought
   back. W = 50, 100 or 200 words, chosen as rule 25 chose.
   Chosen: 100 words (held-out mean 0.8096 against 0.8087, 14 pages lost against 15, the
   2026 pages alone moving; site folds: Dragnet train 0.9056 against 0.9065, no set 0.002
   lower; 200 words costs Dragnet train 0.005 there). Shipped as `guard.join_corpus`, which
   counts words as the guard does (rule 13: the same white-space words on these pages, but a
   Chinese, Japanese or Thai block by its characters), and which this script now measures:
   the same choice, held-out mean 0.8097, Dragnet train 0.9051 in the site folds.
27. Written 2026-11-30 (06:08), after rule 26's figures, before its own: a section's heading
   goes with its first paragraph, as gold texts keep it (jusText keeps a short block before
   good text the same way). A block the decision drops that is a heading (the labeller's
   ``in_heading``) of at most 20 white-space words is kept when the next block is kept
   (variant a) or is kept and prose (`page_structure.is_prose`; variant b). Applied after the
   shipped rules (11 and 12, the guard, the join). Chosen as rule 23 chose (among the
   variants no set loses more than 0.002 with, held out and in the site folds, and that lose
   no more pages with a set held out, the highest held-out mean, if higher than the shipped
   rules'); a winner is shipped for `auto`.
   Chosen: (a), 20 words (held-out mean 0.8097 to 0.8099, (b) equal at four decimals; 14
   pages lost to 13; site folds 0.8477 to 0.8475, no set 0.002 lower). Not shipped
   (`guard.HEADING_MAX_WORDS` ``None``): measured once after the choice, against the tree
   before, Japanese fell 0.847 to 0.840, past the 0.005 a language may lose (issue 38's "no
   language loses", as rules 13 and 22 checked it), and every other held set fell a little
   too: Dragnet test 0.9285 to 0.9279, GoogleTrends test 0.7386 to 0.7381, Chinese 0.832 to
   0.831, Thai 0.911 to 0.909, the 2026 pages' snippet F1 (out of fold) 0.8364 to 0.8353
   (word F1 0.7995 to 0.7998); CleanEval test 0.9198 unchanged. A gain of 0.0002 on the
   training pages is within two runs' difference; this rule should have asked for more, as
   the J rules do (0.002).
28. Written 2026-11-30 (07:40), after rule 27's figures, before its own: the rules since rule
   11 change what is done with the labeller's decision; this one asks what the labeller should
   read. Some of its columns describe a site's template rather than a block: where on the page
   the block stands (``position``, ``chars_before``), how large the page is
   (``log_page_blocks``, ``log_page_chars``) and how deep the block and its neighbours sit
   (``depth``, ``depth@-2`` to ``depth@+2``). Trees can learn a training site's layout from
   them, which no page of another benchmark shares. Candidates (`FEATURE_FAMILIES`): the
   shipped labeller trained without one family (its columns set to 0 for every training
   page, in both stages, so that no tree reads them), or without all three. Chosen by rule
   16's J, as rules 19 to 21 chose: among the candidates losing no more pages with a set held
   out than the shipped labeller, the highest J wins if it beats the shipped one's by more
   than 0.002, each at its own site-fold threshold through the shipped rules. A winner is
   shipped only if it then passes the standing checks, read once: no MultiBoilerNet language
   loses more than 0.005 (`bench/multilingual_pipeline.py --mode auto`).
   The shipped labeller stays: without the position columns J is 0.8104 against 0.8093 (less
   than 0.002) and one page more is lost held out (17 against 16); without depth 0.8098 and
   19 pages; without page size 0.8007 (14 pages); without all three 0.8032 (11 pages). Each
   family moves single sets by up to 0.02 in both directions, the mean hardly: the trees do
   not lean on a site's template more than on anything else.
29. Written 2026-11-30 (07:55), after rule 28's figures, before its own. Rules 11, 12 and 18
   chose how much prose the decision must keep outside comment-marked blocks before it drops
   the ones it keeps (`guard.COMMENTS_BESIDE_PROSE_WORDS`, 400 words, articles the same) by
   rule 9's bound: no set, held out or in the site folds, more than 0.002 lower. A smaller
   limit raises Dragnet train held out (an article of 100-400 words beside its readers'
   comments, the pages of a benchmark whose gold is the article) and costs the 2026 forums
   in the site folds (a question of that length over its answers). Rule 16's J was made to
   weigh that trade: the project is judged on one half of the 2026 benchmark (the site
   folds) and on five benchmarks it does not hold (a set held out). Candidates: 50, 100,
   200 words, on every page (articles the same), against the shipped 400, applied to the
   shipped file's decisions (threshold -1) through the shipped rules with each set held out
   and in the site folds. Chosen as rules 16 to 21 choose: among the limits losing no more
   pages with a set held out, the highest J wins if it beats the shipped limit's by more
   than 0.002. A winner is shipped only if it then passes the standing checks, read once:
   no MultiBoilerNet language more than 0.005 lower.
   The shipped 400 stays: every smaller limit loses one page more with a set held out (15
   against 14: a 2026 thread whose first post, 50-400 words outside the comment-marked
   replies, is all that is left), though J rises 0.8080 to 0.8114 / 0.8157 / 0.8172 (200 /
   100 / 50 words) and Dragnet train held out 0.782 to 0.801 / 0.821 / 0.830 (trafilatura
   0.792). The site folds' 2026 pages lose 0.002-0.0035.
30. Written 2026-11-30 (07:52), after rule 29's figures, before its own: rule 29's smaller
   limits lose 2026 threads whose opening post is long enough; rules 10 and 12 gated on the
   page's type, whose forum recall is 0.60, and lost a thread the model called an article.
   A page the model is unsure of is not surely an article: the gate here is the model's
   probability that the page is a forum (`page_types`; the 2026 pages' out of fold, the
   other sets' from the shipped model, which learnt the 2026 pages only). Candidates: the
   limit L = 50, 100 or 200 words on pages whose forum probability is below P = 0.1, 0.2 or
   0.35, the shipped 400 elsewhere (nine), applied as rule 29 applies its limits. Chosen as
   rule 29 chooses (by J, no more pages lost with a set held out, 0.002 margin), with the
   same standing check after.
   Chosen: 50 words under 0.2 (J 0.8080 to 0.8117, 14 pages lost held out as before;
   Dragnet train held out 0.7816 to 0.7999; the site folds' sets within 0.0005). The limits
   under 0.35 lose the 2026 thread of rule 29; under 0.1 they gain less than 0.002 of J.
   Shipped as `guard.COMMENTS_UNLIKELY_FORUM_WORDS` and `COMMENTS_FORUM_BELOW`.
31. Written 2026-11-30 (08:05), after rule 30's figures and test figures, and after a list of
   the pages lost with a set held out (training pages only), before its own: three of the
   eight 2026 pages lost held out are threads the page-type model is sure of (forum
   probability 0.79 to 0.99) whose replies, marked as comments, the decision drops, keeping
   the opening post. Rules 6 to 10 had a second trigger for that (the main element, when the
   decision keeps little of its prose), which cost Dragnet train because it also fired on
   articles over their comment threads, and rule 10's gate, the most probable type, called
   85 Dragnet pages forums. Candidates: that trigger (the main element's prose at least 100
   words, the decision keeping less than S of it in the main element, S = 0.35 or 0.5) keeping
   every block of the main element, comment-marked ones too, only on pages whose forum
   probability is at least P = 0.5 or 0.8 (four). Applied in the shipped rules' guard (the
   shipped file's decisions, threshold -1, each set held out and in the site folds); chosen
   as rules 29 and 30 choose (by J, no more pages lost held out, 0.002 margin), with the
   same standing check after (no MultiBoilerNet language 0.005 lower).
   None is chosen (`guard.MAIN_MIN_FORUM_PROBABILITY` stays off with the trigger): P 0.8
   saves 2 of the 2026 pages held out (12 lost against 14) but J gains 0.0006-0.0008 (0.8117
   to 0.8123 / 0.8125), under the margin; P 0.5 saves 3 but costs Dragnet train 0.023 in the
   site folds (J 0.8116-0.8117).
32. Written 2026-11-30 (10:35), after a prototype's figures (the same as below): a record of
   the lever rule 31's note named, not a selection. What decides rules 29 to 31 is the
   page-type model's forum probability. A page may declare its type: schema.org types
   (JSON-LD ``@type``, microdata ``itemtype``) and ``og:type``. Read from the HTML
   (`declared_type_flags`: six groups of type names, three ``og:type`` values), they become
   nine more page-type columns, the model is trained on them as `page_type_probabilities`
   trains it, and rules 30 and 31 run again on its probabilities. They would be built into
   the lexbor walk (which passes every attribute, the head and the scripts anyway) only if
   rule 30's J at the shipped settings, or the best of rules 30 and 31 by their own
   choice, beat J without them by more than 0.002, losing no more pages held out.
   Not built. The declared types raise the page-type accuracy out of fold from 0.715 /
   0.721 / 0.710 to 0.734 / 0.736 / 0.734 (three seeds) and forum precision from 0.80-0.88
   to 0.88-0.94, but not forum recall (0.62-0.67 both): a thread the model misses declares
   no more than one it finds. Rule 30 with them: J 0.8111 at the shipped 50 words under 0.2
   (0.8117 without; Dragnet train held out 0.7969 against 0.7999); their best, 50 words
   under 0.35, J 0.8134 with 14 pages lost, 0.0017 over the shipped J, under the margin
   (without them that setting loses a 15th page). Rule 31 with them: at P 0.8 the trigger
   saves three 2026 pages held out (11 pages lost against 14) at J 0.8115-0.8116, no gain.
   No page of CleanEval dev or GoogleTrends train declares a type (their HTML was stored
   without scripts or meta elements); 39 % of Dragnet train's pages and 80 % of the 2026
   pages do. On benchmarks stored that way the columns say nothing.
33. Written 2026-11-30 (09:58), before its figures, but after reading the list of 2026
   threads the page-type model misses out of fold (of the 45, 11 real threads; their URLs
   suggested it) and the page that the out-of-fold page types lose (a thread whose replies
   rule 30 drops): the out-of-fold figures below are therefore optimistic for those pages.
   The forum group of `page_types.URL_WORDS` lacks the thread and board paths of common
   forum software. Candidate: it gains ``showthread``, ``forumdisplay`` (vBulletin, MyBB),
   ``viewforum`` (phpBB), ``viewthread`` (Discuz), ``showtopic`` (Invision), ``board`` and
   ``boards`` (SMF, message boards), ``comments`` (Reddit-style and link aggregators) and
   ``talk`` (talk boards, wiki talk pages); the model is retrained
   (`bench/page_types.py`). Shipped if the page-type accuracy out of fold, mean of three
   seeds, does not fall, and then rule 30's J with the new out-of-fold probabilities is not
   lower than the shipped 0.8117 by more than 0.001 with no more pages lost held out; the
   test figures read once after, as for every rule: no set more than 0.002 lower.
   Shipped. Accuracy out of fold 0.709 / 0.717 / 0.715 to 0.739 / 0.728 / 0.730 (seeds 1-3),
   forum recall 0.60-0.62 to 0.76; rule 30's J at 50 words under 0.2 0.8133 (14 pages lost
   held out, as before). Rule 30 run again on these probabilities chooses 50 words under
   0.35 (J 0.8158, 14 lost: the thread it had lost is found); rule 31 run again over that
   chooses none (P 0.8 saves 3 pages held out, J 0.8168-0.8169, under the margin).
39. Written 2026-11-30 (14:20), after a what-if on the training pages' decisions with the
   figures below, so the choice is no estimate; the test sets read once after are. Of the
   2026 pages held out, a product page keeps its description twice: a responsive layout
   writes text once per screen size and hides the copies with style sheets, which the parser
   does not read, while the gold has it once. Candidate (`guard.drop_repeats`, after the
   shipped rules): a kept block whose text a kept block before it has, word for word, is
   dropped, if it has at least N white-space words, N = 3, 5 or 10. Chosen as rule 27 (no
   set more than 0.002 lower held out or in the site folds, no more pages lost held out, the
   highest held-out mean, if higher than none's); then read once: `auto` on CleanEval test, the
   Dragnet test split and GoogleTrends test no more than 0.002 lower, the 2026 pages out of
   fold not lower, and no MultiBoilerNet language more than 0.005 lower.
   Chosen: N = 5 (held-out mean 0.8191 to 0.8204, the 2026 pages held out 0.7712 to 0.7742;
   site folds 0.8483 to 0.8497; 14 pages lost held out either way; N = 3 / 10 0.8201 /
   0.8203). Read once: CleanEval test 0.9195 to 0.9165 (131 pages change: its gold keeps
   repeated lines), past the 0.002; the Dragnet test split 0.9290 to 0.9305, GoogleTrends
   test 0.7386 to 0.7411. Not shipped: `guard.REPEAT_MIN_WORDS` stays ``None``, as rule 27's
   setting did.
40. Written 2026-11-30 (14:22), before its figures, after rule 39's test figures. Readability
   keeps its best-scored container and the siblings like it; `auto` keeps whatever its trees
   call content, anywhere on the page, and with Dragnet train held out its precision is 0.78
   against readability's 0.89. Candidate: on a page the page-type model gives an article
   probability of at least P (0.5 or 0.8), where the decision keeps at least 200 words of
   prose inside the page's main element (`page_structure`), the kept blocks outside that
   element are dropped. Chosen as rule 39; then read once as rule 39.
   None is chosen: P 0.8 raises Dragnet train held out (0.8187 to 0.8225) but costs
   CleanEval dev 0.012 and loses 2 more pages held out (held-out mean 0.8166); P 0.5 costs
   every set in the site folds (held-out mean 0.8068, 26 pages lost). A main element holding
   half the page's prose is often narrower than the main content (a lead paragraph apart, a
   second column of the article).
41. A record, not a selection (2026-11-30, 14:35): would the labeller generalise better if
   it knew which blocks readability keeps? With Dragnet train held out, `auto`'s precision
   there is 0.78 against readability's 0.89. One more column, whether readability's output
   (from `bench/quality.py --save-outputs`) holds the block's text, in both stages, the
   shipped candidate's trees and threshold rule (`peer-column`). It does not: the site folds
   gain (mean 0.8483 to 0.8536) but the held-out mean falls (0.8204 to 0.8144; the 2026
   pages held out 0.7704 to 0.7551, Dragnet train 0.8255 to 0.8250; 21 pages lost held out
   against 16), J 0.8168 to 0.8119 (the shipped candidate at the same threshold rule,
   -0.75). What readability keeps helps on the sites the trees learnt and not on new
   benchmarks, so a native readability-style scorer is not the lever for the sets held out.
42. Written 2026-11-30 (16:41), before its figures. The trees already draw 80 % of the rows
   and 80 % of the columns each (`training.TRAIN_PARAMS`); rule 41 says what the site folds
   learn does not carry to a set held out. More randomised trees lean less on any one
   column, a class word or a template's position, which a new benchmark's markup may not
   share. Candidates, the shipped labeller otherwise: (a) extremely randomised splits
   (LightGBM's ``extra_trees``: each column's threshold drawn at random, the best column
   kept); (b) half the columns a tree (``feature_fraction`` 0.5). Chosen by J as rule 16
   (`choose_by_j`: no more pages lost held out, J above the shipped by more than 0.002),
   each at the threshold its site folds choose; then read once on the test sets with rule
   39's checks (each test set no more than 0.002 lower, no language more than 0.005).
   None is chosen (J 0.8119 / 0.8144 against 0.8168): both raise the site folds (mean 0.8483
   to 0.8539 / 0.8498) and lower the sets held out (0.8204 to 0.8140 / 0.8170; the 2026
   pages held out 0.7704 to 0.7539 / 0.7593, 17 / 13 of them lost against 8), as rule 41's
   column did. What the trees learn beyond the shipped ones fits the sites they share folds
   with; randomness in the trees does not make it carry to a set they never saw.
43. A record, not a selection (2026-11-30, 17:10, before its figures): what the language
   model contributes to `auto` now (issue 38, item 6; docs/labeller.md's ablation is of the
   labeller of 2026-11-28). The shipped recipe with the columns the language model fills
   (`PERPLEXITY_FEATURES`: every ``*ppl*`` column and ``oov_rate``) set to zero, so that no
   tree of either stage can split on them, in the site folds and with each set held out,
   through the shipped rules (`lm-ablation`). The features stay whatever it shows: the
   issue keeps perplexity first-class.
   Without them: held-out mean 0.8204 to 0.8189 (every set a little lower: CleanEval dev
   0.8861 to 0.8837, Dragnet train 0.8255 to 0.8248, GoogleTrends train 0.7998 to 0.7980,
   the 2026 pages 0.7704 to 0.7691), 14 pages lost held out against 16; the site folds 0.8483
   to 0.8507 (the 2026 pages 0.7988 to 0.7976); J 0.8168 to 0.8154. The language model adds
   a little on sets the trees never saw and costs a little on the sites they share folds
   with: 0.0015 of the held-out mean, within what one run to the next moves.
45. Written 2026-11-30 (18:40), before its figures, after reading which `without` snippets
   of the 2026 pages `auto` keeps out of fold (on articles 60 of 1,157, trafilatura 39,
   readability 21): calls to action ("Sign up for Newsletters", "Subscribe for free...",
   "Share this:", "Contact Us", "Add A Comment", "Join the Conversation"), the headings of
   widgets ("Related Articles", "You may also like", "Popular Articles", "Editor's Picks")
   and disclosures ("As an Amazon Associate we earn from qualifying purchases"), each a short
   block of its own. trafilatura 1.1.0's real-world checks' must-not strings, read in an
   earlier session (`bench/package_pages.py`), are of the same kind, in German too, so those
   checks do not judge this rule cleanly. Candidate: after the shipped rules, a kept block
   of at most N white-space words whose text `guard.CALL_TO_ACTION` matches (phrases of
   those three kinds, in English, German, French and Spanish, written from what such
   widgets say anywhere, no site's words) is dropped (`guard.drop_calls_to_action`); N = 6
   or 12 (`guard.CALL_TO_ACTION_MAX_WORDS`). Chosen by `bounded_limits` as rules 23 to 27
   and 39 (no set more than 0.002 lower, held out or in the site folds, no more pages lost
   held out, the highest held-out mean if above the shipped one); then read once on the
   test sets with rule 39's checks (each test set no more than 0.002 lower, no language more
   than 0.005), the 2026 pages' snippet F1 out of fold beside them.
   Chosen: N = 12 (held-out mean 0.8191 to 0.8200: CleanEval dev 0.8863 to 0.8868, Dragnet
   train 0.8187 to 0.8204, GoogleTrends train 0.8002 to 0.8018, the 2026 pages 0.7712 to
   0.7711; site folds 0.8483 to 0.8491; the same 14 pages lost held out; N = 6 0.8199).
   Read once after, `auto`: CleanEval test 0.9195 to 0.9197, the Dragnet test split 0.9290
   to 0.9299, GoogleTrends test 0.7386 to 0.7407; Chinese, Japanese 0.832, 0.847 unchanged,
   Thai 0.911 to 0.912; the 2026 pages out of fold 0.7998 to 0.8000, their snippet F1 0.835
   to 0.842 (snippet precision 0.895 to 0.913). Shipped (`guard.CALL_TO_ACTION_MAX_WORDS`).
46. Written 2026-11-30 (18:55), after rule 45's figures (its test figures too), before its
   own, after reading the `without` snippets of the 2026 pages `auto` still keeps out of fold
   (165, 52 on products, 30 on threads): a shop's and a thread's interface ("Add to cart",
   "Out of stock", "Free shipping", "Sold by:", "Click to expand...", "Join Date:", "Posts:
   116", "Reactions:", "6 Answers", "6.3K views") and calls to action rule 45's phrases miss
   ("Get started today", "Learn more", "Request A Free Consultation", "Create an account",
   "See plans", "Loading..."). Candidate: rule 45 with `guard.INTERFACE_LINE` too (those
   kinds of line, in English, French, German and Spanish; no site's or brand's words), at
   rule 45's 12 words (`guard.INTERFACE_LINES`). Chosen as rule 45 (`bounded_limits`), then
   read once on the test sets with the same checks.
   Chosen (held-out mean 0.8200 to 0.8201: CleanEval dev 0.8868 to 0.8870, the 2026 pages
   0.7711 to 0.7713, the others unchanged; site folds 0.8491 to 0.8493; the same 14 pages
   lost held out). Read once after: CleanEval test 0.9197 and the Dragnet test split 0.9299
   unchanged, GoogleTrends test 0.7407 to 0.7409, the languages unchanged (0.832 / 0.847 /
   0.912); the 2026 pages out of fold 0.8000 to 0.8006, snippet F1 0.842 to 0.851 (precision
   0.913 to 0.935, recall 0.781 unchanged). The 2026 snippet figures of rules 45 and 46 are
   not held out: both lexicons were written from those pages' `without` snippets. Shipped
   (`guard.INTERFACE_LINES`).
47. Written 2026-11-30 (23:10), before its figures, after reading why `auto` loses m0681 (a
   documentation page: the parser keeps 1,145 of its gold's 6,851 words). Its code samples
   for seven languages are ARIA tab panels (`role="tabpanel"`), all but the chosen one
   `hidden` and `display: none`, and the parser walks past hidden elements. A tab panel is
   hidden only until its tab is clicked; a reader reaches it, as find-in-page reaches
   `hidden="until-found"`, and a product's specifications and reviews, a documentation
   page's other languages, are main content (the 2026 gold keeps them). Counted before any
   figure: 12 of the 2026 pages have a hidden tab panel (6 with text in it), 1 Dragnet page,
   no CleanEval page. Candidate: an element whose `role` holds the token `tabpanel` is never
   hidden (`parse.hidden_element` and its native twin); what is in it is labelled as any
   block. Measured with the labellers as shipped (the 2026 pages out of fold with the fold
   labellers and page types, by `bench/quality.py --out-of-fold`, `auto` and `article`; the
   other training sets in sample, only their pages with a tab panel change). Shipped if, in
   both modes: no more 2026 pages lost against trafilatura, the 2026 word F1 and snippet F1
   not lower, no training set more than 0.002 lower; then read once on the test sets with
   rule 39's checks (each no more than 0.002 lower). The 2026 figure is not a held-out
   estimate: the rule was written from one of its pages.
   Not shipped: `auto` out of fold 0.8006 to 0.8003 and snippet F1 0.851 to 0.851 (recall
   0.781 to 0.780), 2 pages lost as before; `article` 0.756 to 0.756 (+0.0008 of the mean,
   m0681 0.08 to 0.49), snippet F1 0.820 to 0.819, 9 lost as before. Seven 2026 pages change
   in `auto`: m0681 is still lost (the labeller keeps 444 of its now 7,400 words, fewer than
   the 603 before: a page of numbered code lines is mostly short, unlikely blocks), m0677
   gains (0.91 to 0.95), and two service pages lose 0.06 and 0.09, their hidden panels'
   text (other plans, other regions) being what their gold leaves out. No other training
   page has a tab panel; the test sets were not read. The parser is as it was.
48. Written 2026-11-30 (23:56), before its figures, after cleaning one Chinese news page
   written here (a heading and three paragraphs): `auto` dropped the heading and the first
   paragraph, the multilingual labeller off or on, and kept them all once the page's
   ideographs were spaced two at a time. The labellers' word-shape columns (``log_words``,
   ``mean_word_length``, ``ratio_space``, ``words_per_sentence``...) count white-space words,
   so a Chinese paragraph of 35 characters is one 35-character "word": a shape only junk has
   in the languages the labellers learnt. Candidate: on a page whose language is written
   without spaces (`language.UNSPACED_LANGUAGES`), the labeller's rows (and so the page type,
   which reads them) are computed from a view of the blocks and sentences in which each run
   of those scripts is cut into pseudo-words: (a) ideographs and kana two characters a word,
   other scripts as they are; (b) that, and Thai, Lao, Khmer, Myanmar and Tibetan four
   characters a word. The kept text and the sentences are the page's own; the rules after
   the labeller read its blocks as they are and the rows of the view. Measured with
   `bench/multilingual_pipeline.py` (MultiBoilerNet's Chinese, Japanese and Thai pages
   rebuilt from their rows, macro F1 over rows, the shipped variant "both must keep"), in
   `auto` mode, and in `corpus` and `article` mode each on its
   own. Shipped for a mode if the mean of the three languages rises by 0.002 or more and no
   language is 0.005 lower; between (a) and (b) the higher mean. Pages in spaced languages
   are untouched by construction (checked: `core_ab.py`, no output differs on CleanEval,
   Dragnet and the 2026 pages). Then read once, not chosen on: newspaper4k's Chinese,
   Japanese, Thai and Burmese pages (`bench/package_pages.py`).
   Macro F1 over rows, Chinese / Japanese / Thai (mean): `auto` 0.832 / 0.847 / 0.912
   (0.864) before, (a) 0.835 / **0.837** / 0.912 (0.861), (b) 0.835 / 0.837 / 0.904 (0.859);
   `corpus` 0.818 / 0.789 / 0.891 (0.833), (a) 0.826 / 0.883 / 0.891 (**0.867**), (b) 0.826 /
   0.883 / 0.871 (0.860); `article` 0.733 / 0.800 / 0.897 (0.810), (a) 0.743 / 0.831 / 0.897
   (**0.824**), (b) 0.743 / 0.831 / 0.886 (0.820). Shipped: (a) in `corpus` and `article`
   mode (`pipeline.PSEUDO_WORD_MODES`, `language.PSEUDO_WORD_SCRIPTS`); not in `auto`, whose
   Japanese pages lose 0.010. On CleanEval dev and test, Dragnet and the 2026 pages no output
   of either mode differs (2,583 pages, the rule on and off in one process). Read once,
   newspaper4k's three Chinese, two Japanese, Thai and Burmese pages, F1 over characters
   (white-space words are whole clauses in Chinese), mean of the seven: `corpus` 0.922 to
   0.941 (first Chinese page 0.70 to 0.97, second 0.99 to 0.88, the Japanese ones 0.90 to
   0.90 and 0.99 to 0.96); `article` 0.903 to 0.894 (first Chinese
   page 0.86 to 0.97, the third 0.98 to 0.95, the Japanese 0.76 to 0.65 and 0.93 to 0.90):
   seven pages, a read, not a choice.
49. Written 2026-12-01 (00:14), after rule 48's figures, before its own: in `auto` mode the
   page-type model reads the same one-long-word rows on a Chinese or Japanese page, and the
   type is a field of the record that users read, and its forum probability drives `auto`'s
   comment rules. Newspaper4k's five Chinese and Japanese news pages, read for rule 48, came
   out typed listing (3), documentation and service. Candidate: in `auto` mode, on a page in
   a language written without spaces, the page type reads its rows with the words and
   characters of the pseudo-word view (the only text columns it reads besides the dates;
   ``log_words`` and ``log_chars`` as `labeller.block_features` computes them from the cut
   text), the labeller and the rules read the page as it is. Measured on MultiBoilerNet's
   Japanese and Thai news pages rebuilt from their rows (60 each; Chinese: CleanEval's mixed
   pages): the share typed article, and the rows' macro F1 in `auto` mode for the three
   languages. Shipped if the share of the Japanese pages typed article rises and no
   language's F1 is 0.005 lower. English pages are untouched by construction.
   Shipped (`pipeline.PSEUDO_WORD_TYPE_MODES`, `labeller.with_spaces_added`; both gone since
   rule 63, which cuts the page for `auto`'s labeller too), by the letter
   of the rule and little more: the Japanese pages typed article 0 to 1 of 60 (documentation,
   listing and service before and after: pages rebuilt from rows have no URL and no class
   names), the Chinese 0 to 40 of 50, the Thai (not cut) none; the rows' F1 unchanged in all
   three (0.832 / 0.847 / 0.912), no output changes: in `auto` the type only moves the
   comment rules of likely forums. No output of CleanEval dev and test, Dragnet or the 2026
   pages changes (2,583, the rule on and off in one process). Read after: newspaper4k's five
   Chinese and Japanese news pages typed article 4 of 5 (0 before), their text unchanged.
50. Written 2026-12-01 (02:05), before its figures, after reading why `auto` loses two
   GoogleTrends test pages (sports statistics whose gold is mostly their tables' figures:
   the labeller kept the tables, 989 of their cells were dropped as `no_words`). A sentence
   without a letter is dropped as `no_words` before its block's label is read, in every mode
   (the perplexity paper's rule, for separators and page numbers), and a table cell is a
   block of its own: a table's figures ("29", "9/11/16", "0-0", ".333") are lost wherever
   the labeller keeps the table, results, schedules, prices, specifications, documentation
   tables, which the issue asks kept. Candidate: in the modes with a labeller, a sentence
   with no letter but a digit, in a block whose element is a table cell (`td`, `th`), is
   not `no_words` (`decide.is_figure`); it is decided as its block's other sentences are
   (the block's label, the sentence filter's limit). `perplexity` mode as it was. Measured
   as rule 47 (the 2026 pages out of fold by `bench/quality.py --out-of-fold`; CleanEval dev,
   the Dragnet train split and GoogleTrends train in sample), in `auto`, `corpus` and
   `article`. Shipped if in each mode: no more 2026 pages lost against trafilatura, the 2026
   word F1 and snippet F1 not lower, no training set more than 0.002 lower; then read once
   on the test sets with rule 39's checks (each no more than 0.002 lower). GoogleTrends test
   is no held-out estimate for this rule: it was written from two of its pages.
   Shipped (`decide.is_figure`, `decide.CELL_TAGS`), measured by `bench/table_figures.py`
   (the rule on and off in one process). Macro word F1 without / with, in `auto`, `corpus`,
   `article`: CleanEval dev 0.9482 / 0.9483, 0.9574 / 0.9574, 0.8608 / 0.8608; Dragnet train
   0.9212 / 0.9214, 0.7313 / 0.7313, 0.9699 / 0.9702; GoogleTrends train 0.8670 / 0.8675,
   0.7663 / 0.7663, 0.8730 / 0.8736; the 2026 pages (`auto` out of fold) 0.8004 / 0.8012,
   0.7650 / 0.7654, 0.7557 / 0.7566, snippet F1 the same in each mode (0.8503, 0.8187,
   0.8196), 23 / 19 / 24 pages changed; no set loses a page more against trafilatura. Read
   once: CleanEval test 0.9197 / 0.9201, 0.9097 / 0.9098, 0.8920 / 0.8924 (66 / 39 / 63 pages
   changed, 6 / 10 / 16 lost as before); the Dragnet test split 0.9299 / 0.9299, 0.7682 /
   0.7681, 0.9638 / 0.9638; GoogleTrends test (not held out, see above) 0.7409 / 0.7516,
   0.6799 / 0.6828, 0.6993 / 0.7185, lost 2 to 1 in `auto` (gt_105 kept) and 5 to 3 in
   `article`.
51. Written 2026-12-01 (02:36), after rule 50's figures, before its own: rule 50 in every
   element. A price ("$19.99", "1.299,00 €"), a date, a score or a version number in an
   element of its own has no letter either, and a product page's price is its content.
   Candidate: in the labeller modes, every sentence with no letter but a digit is decided as
   its block, whatever the block's element. Measured as rule 50 (`bench/table_figures.py
   --everywhere`: rule 50 as shipped against the candidate, in one process), shipped under
   rule 50's checks against rule 50 as shipped.
   Shipped (`decide.is_figure`: a digit; `decide.CELL_TAGS` gone). Macro word F1, rule 50 /
   rule 51, in `auto`, `corpus`, `article`: CleanEval dev 0.9483 / 0.9491, 0.9574 / 0.9583,
   0.8608 / 0.8613; Dragnet train 0.9214 / 0.9216, 0.7313 / 0.7313, 0.9702 / 0.9704;
   GoogleTrends train 0.8675 / 0.8694, 0.7663 / 0.7665, 0.8736 / 0.8758; the 2026 pages
   0.8012 / 0.8017, 0.7654 / 0.7659, 0.7566 / 0.7576, snippet F1 0.8503 / 0.8515, 0.8187 /
   0.8193, 0.8196 / 0.8196; lost against trafilatura as before but `article` on the 2026
   pages, 9 to 8. Read once: CleanEval test 0.9201 / 0.9203, 0.9098 / 0.9100, 0.8924 /
   0.8926; the Dragnet test split 0.9299 / 0.9301, 0.7681 / 0.7682, 0.9638 / 0.9640;
   GoogleTrends test 0.7516 / 0.7519, 0.6828 / 0.6827, 0.7185 / 0.7182; lost as before. The
   candidate was measured with `str.isdigit`, the shipped rule with a regular expression's
   decimal digit (superscripts no longer count): the same figures on every set.
   Read after, outside the checks of rules 50 and 51 (which should have named them):
   MultiBoilerNet's Chinese, Japanese and Thai rows (`bench/multilingual_pipeline.py`, the
   tree before rule 50 against rule 51's): `auto` 0.832 / 0.847 / 0.912 to 0.828 / 0.847 /
   0.911, `corpus` unchanged (0.826 / 0.883 / 0.891), `article` 0.743 / 0.831 / 0.897 to
   0.729 / 0.828 / 0.892. Their gold calls many rows of figures boilerplate (dates, counts),
   and a row weighs there as much as a paragraph.
52. Written 2026-12-01 (02:55), before its figures, after reading why `auto` loses m1572 (a
   2026 listing of homes for sale; out of fold it keeps 268 words, none of the gold's): its
   five descriptions are paragraphs of 40 to 100 words, each card's price, address, beds and
   baths seven or eight short blocks apart, and the guard's run of prose allows two blocks
   between two of its blocks (`guard.MAX_RUN_GAP`), a number no rule chose: the page has no
   run. A listing's or a thread's items put their short lines between their texts.
   Candidates: `MAX_RUN_GAP` 2 (shipped), 4, 8. Measured by `bench/run_gap.py` (each in one
   process, the outputs of `auto`, `corpus` and `article` as rule 50 measured them); a
   candidate passes rule 50's checks against the shipped gap in every mode; of those that
   pass, the one with the highest mean of the four training sets' `auto` word F1 ships
   (none: 2 stays). Then read once on the test sets with rule 39's checks. The 2026 figure
   is not a held-out estimate for it: it was written from one of those pages.
   Not shipped: neither candidate passes. Macro word F1, gaps 2 / 4 / 8: `auto` CleanEval
   dev 0.9491 throughout, Dragnet train 0.9216 / 0.9212 / 0.9199, GoogleTrends train 0.8694
   / 0.8694 / **0.8607**, the 2026 pages 0.8017 / 0.8022 / 0.8022 but snippet F1 0.8515 /
   **0.8500** / **0.8510** (m0670 no longer lost); `article` CleanEval dev 0.8613 / 0.8621 /
   0.8803, Dragnet train 0.9704 / 0.9693 / **0.9679**, GoogleTrends train 0.8758 / 0.8757 /
   **0.8704**, the 2026 pages 0.7576 / 0.7587 / 0.7622, snippet F1 0.8196 / **0.8194** /
   0.8231, 8 / 7 / 5 lost; `corpus` within 0.0007. m1572 stays lost at every gap in `auto`.
   The test sets were not read. The gap stays 2.
53. Written 2026-12-01 (05:55), before its figures, after reading why `auto` keeps 4,646
   words of a 2026 collection page whose gold has 480 (m0632, out of fold; trafilatura 0.94,
   `auto` 0.18): the shop's privacy policy and returns policy, in its footer, each in an
   element that says it is a modal dialog (``role="dialog"``, ``aria-modal="true"``), which
   a browser shows only when a link opens it. `parse.hidden_element` walks past a
   ``<dialog>`` that is not ``open``, not an element that is a dialog by its ARIA role. In
   the training sets 72 of the 460 2026 pages have text in such elements (89,000 words
   outside scripts, about 2 % of them in their page's gold: a cookie banner one gold keeps,
   and a "republish this article" copy that an inline style hides already); CleanEval dev,
   the Dragnet train split and GoogleTrends train have none. (Elements with
   ``aria-hidden="true"`` were read too and are no candidate: 14 % of their 27,000 words
   are in the gold, a listing's cards among them.) Candidate: an element whose ``role`` is
   ``dialog`` or ``alertdialog`` (its first token, ASCII case-insensitive), or whose
   ``aria-modal`` is ``true``, is hidden, with all it holds, as a closed ``<dialog>`` is:
   in every mode, the parse being shared. Measured as rule 50 (the 2026 pages out of fold,
   the other training sets in sample, in `auto`, `corpus` and `article`, the rule on and
   off in one process), shipped under rule 50's checks; then read once on the test sets
   with rule 39's checks, and on MultiBoilerNet's rows (rebuilt from rows, they hold no
   attributes: unchanged by construction). The 2026 figure is not held out for it: it was
   written from one of those pages.
   Not shipped: it fails two checks. Macro word F1 without / with, `auto`, `corpus`,
   `article` (`bench/dialog_roles.py`): CleanEval dev, the Dragnet train split and
   GoogleTrends train unchanged (no page has such an element); the 2026 pages 0.8017 /
   0.8056, 0.7659 / 0.7710, 0.7576 / 0.7630, snippet F1 0.8515 / 0.8527, 0.8193 / 0.8215,
   0.8196 / **0.8190**, 41 / 52 / 44 pages changed; lost against trafilatura 2 / **3** in
   `auto` (m0548, a forum thread: only its cookie banner is a dialog; without those blocks
   the labeller, which learnt the page with them, drops the first post), 4 / 4 and 8 / 8.
   The test sets were not read.
54. Written 2026-12-01 (05:40), after rule 53's figures, before its own: rule 53's dialogs
   at the decision instead of the parse. The labellers learnt every page with its dialogs'
   blocks in it, and taking them out of the parse moves the other blocks' features (rule 53's
   m0548). Candidate: the parse keeps the blocks of an element that is a modal dialog by its
   ARIA attributes (`parse.aria_dialog`, rule 53's test), and says which they are; in the
   labeller modes, after the labeller, the page type, the guard and `auto`'s rules, such a
   block is never content. `perplexity` mode as it was (it keeps every block's sentences by
   their perplexity alone). Measured and checked as rule 53 (`bench/dialog_roles.py`, the
   decision's rule on and off in one process); the 2026 figure is not held out for it.
   Shipped (`parse.parse_blocks`'s ``dialogs``, `guard.drop_dialogs`). Macro word F1
   without / with, `auto`, `corpus`, `article`: CleanEval dev, the Dragnet train split and
   GoogleTrends train unchanged; the 2026 pages 0.8017 / 0.8060, 0.7659 / 0.7705, 0.7576 /
   0.7624, snippet F1 0.8515 / 0.8517, 0.8193 / 0.8199, 0.8196 / 0.8206, 15 / 41 / 22 pages
   changed, lost against trafilatura 2 / 2, 4 / 4, 8 / 8. Read once: CleanEval test, the
   Dragnet test split and GoogleTrends test unchanged in every mode (no page changes: none
   has such an element); MultiBoilerNet's rows unchanged by construction.
55. Written 2026-12-01 (11:25), after rule 52's figures (a wider gap saved m0670 and cost
   elsewhere), before its own, after reading why `auto` keeps 23 % of the prose of that
   2026 documentation page (out of fold; trafilatura's recall 0.94, `auto`'s 0.23): its
   guard's run stops where the reference puts code between its paragraphs (a definition
   list's term in ``<code>``, then four list items of code, then prose again), so the run
   holds 2,428 of the page's 8,349 words of prose and the decision keeps 60 % of it.
   Documentation writes code samples, signatures and terms between its paragraphs; a gap
   that counts them breaks its prose into short runs. Candidate: a block inside ``pre`` or
   ``code`` (the rows' `path_pre` or `path_code`) is not counted among the blocks between
   two blocks of the run (`guard.MAX_RUN_GAP` stays 2 for the others); such blocks still
   never join the run (they end no sentence or are not prose). Measured as rule 52
   (`bench/run_gap.py --code`, the rule on and off in one process, `auto`, `corpus` and
   `article`); shipped under rule 50's checks; then read once on the test sets with rule
   39's checks. The 2026 figure is not held out for it: it was written from one of those
   pages. (A block of code that is itself prose, ten words or more ending a sentence, joins
   the run as before: the rule changes only what counts in a gap.)
   Shipped (`guard.GAP_FREE_COLUMNS`). Macro word F1 counted / not, `auto`, `corpus`,
   `article`: CleanEval dev, the Dragnet train split and GoogleTrends train unchanged (no
   page changes); the 2026 pages `auto` 0.8063 / 0.8063 and `corpus` 0.7705 / 0.7705 (no
   page changes), `article` 0.7624 / 0.7629, snippet F1 0.8206 / 0.8209, 4 pages changed,
   lost against trafilatura 8 / 7 (m0670 saved). In `auto` m0670 stays lost: its run now
   reaches 3,781 words, of which the decision keeps 51 %, and the next gap is a clause's
   lead-in ("The optional WINDOW clause has the general form") and its heading, which are no
   code. (`auto`'s 2026 figures here, 0.8063 / 0.8530, are of today's fold labellers,
   retrained on a fresh machine: 0.8060 / 0.8517 in rule 54's run.) Read once: CleanEval
   test, the Dragnet test split and GoogleTrends test unchanged in every mode (no page
   changes); MultiBoilerNet's rows `auto` 0.828 / 0.847 / 0.911, unchanged.
56. Written 2026-12-01 (11:55), after rule 55's figures, before its own: in `auto` m0670
   stays lost because a clause's heading and its lead-in line ("The optional WINDOW clause
   has the general form", "where frame_start and frame_end can be one of") stand between
   two paragraphs with the code they introduce: reference pages introduce each sample with
   such a line. Candidate, over rule 55: a block directly followed by a block of code
   (`guard.GAP_FREE_COLUMNS`), itself no block of the run, is not counted in the gap
   either. Measured and checked as rule 55 (`bench/run_gap.py --lead-ins`, rule 55 on both
   sides); then read once on the test sets with rule 39's checks. The 2026 figure is not
   held out for it: it was written from one of those pages.
   Shipped (`guard.GAP_FREE_LEAD_INS`). Macro word F1 without / with, `auto`, `corpus`,
   `article`: CleanEval dev, the Dragnet train split and GoogleTrends train unchanged (no
   page changes); the 2026 pages 0.8063 / 0.8074, 0.7705 / 0.7705, 0.7629 / 0.7630, snippet
   F1 0.8530 / 0.8537, 0.8199 / 0.8199, 0.8209 / 0.8221, 2 / 0 / 4 pages changed, lost
   against trafilatura 2 / 1 in `auto` (m0670 saved), 4 / 4, 7 / 7. Read once: CleanEval
   test, the Dragnet test split and GoogleTrends test unchanged in every mode (no page
   changes); MultiBoilerNet's rows unchanged (`auto` 0.828 / 0.847 / 0.911).
57. Written 2026-12-02 (01:09), before its figures, after reading why `article` keeps 23 %
   of a 2026 listicle (m0246, "best online tutoring platforms"; trafilatura's recall 0.97,
   `auto`'s out of fold 0.94): each platform's section is a heading, two paragraphs, a price
   heading and line, and "Pros" and "Cons" headings over short unlinked list items, so no
   two of its paragraphs are within two blocks and the guard's longest run holds 164 of
   its 3,500 words. Reviews, how-tos and listicles put subheadings and lists of short
   points between their paragraphs, as documentation puts code (rule 55); a page's
   navigation, teasers and tag lists are linked. Candidate, over rules 55 and 56: a block
   in a heading or a list (the rows' `in_heading`, `in_list`) whose link density is under
   the run's `MAX_RUN_LINK_DENSITY` is not counted in the gap either
   (`guard.GAP_FREE_UNLINKED_COLUMNS`); such blocks still join the run only as prose.
   Measured and checked as rule 55 (`bench/run_gap.py --unlinked`, on and off in one
   process, `auto`, `corpus` and `article`); then read once on the test sets with rule
   39's checks. The 2026 figure is not held out for it: it was written from one of those
   pages.
   Not shipped: `auto` fails the checks. Macro word F1 counted / not, `auto`, `corpus`,
   `article`: CleanEval dev unchanged; the Dragnet train split 0.9216 / 0.9206, 0.7313 /
   0.7315, 0.9704 / 0.9701; GoogleTrends train 0.8694 / 0.8694, 0.7665 / 0.7665, 0.8758 /
   0.8752; the 2026 pages 0.8074 / **0.8069**, 0.7705 / 0.7712, 0.7630 / 0.7661, snippet
   F1 0.8537 / **0.8521**, 0.8199 / 0.8208, 0.8221 / 0.8233; 3 / 1 / 17 pages changed;
   lost against trafilatura 1 / 1, 4 / 4, 7 / 5 (m0246 and m2850 saved in `article`). The
   test sets were not read.
58. Written 2026-12-02 (01:13), after rule 57's figures, before its own: rule 57 in
   `article` mode only. `article`'s labeller reads no page structure, so its guard keeps no
   main element and its run of prose is all it has to take a page back; `auto`'s guard
   steps in on fewer pages and keeps the main element too, where a longer run adds
   what the labeller rightly dropped. Candidate: `guard.GAP_FREE_UNLINKED_MODES` =
   (``article``,) with rule 57's columns. By rule 57's figures it passes rule 50's checks in
   `article` and changes nothing in the other modes; so it is read once on the test sets
   with rule 39's checks in `article` (CleanEval test, the Dragnet test split and
   GoogleTrends test no more than 0.002 lower; MultiBoilerNet's languages no more than
   0.005, `bench/multilingual_pipeline.py --mode article`) and ships if they pass. Its
   training figures choose it and do not estimate it.
   Shipped (`guard.GAP_FREE_UNLINKED_MODES`). Training sets as rule 57's `article` column,
   `auto` and `corpus` unchanged (no page changes; `bench/run_gap.py --unlinked`). Read
   once (`--unlinked --test`, `article`, counted / not): CleanEval test 0.8926 / 0.8933 (5
   pages changed, 16 / 15 lost), the Dragnet test split 0.9640 / 0.9640 (none changed),
   GoogleTrends test 0.7182 / 0.7180 (3 changed, 3 / 3 lost); `auto` and `corpus`
   unchanged on all three. MultiBoilerNet's rows in `article` 0.729 / 0.828 / 0.892 with
   and without (zh / ja / th).
59. Written 2026-12-02 (01:19), before its figures, after reading why `article` keeps 10 %
   of a 2026 documentation page (m2865, an overview of data types; trafilatura's recall
   0.79): each type's paragraph, 12 to 91 words, ends "For more information, see:" before a
   list of two links, and a block that ends with a colon is no block of the guard's run
   (only one that ends a sentence is), so the page's longest run is one paragraph of 58
   words. A paragraph that introduces a list or a sample ends with a colon in articles and
   documentation alike; a line of ten words or more sitting mostly outside links is
   running text whatever its last mark. Candidate: a block whose last mark is a colon (the
   rows' `ends_colon`) may join the run as one that ends a sentence does
   (`guard.RUN_ENDS_COLUMNS`), the other conditions (ten words, link density under 0.3,
   not in a part left out) as before. Selection, fixed now: (a) in every mode if it passes
   rule 50's checks in `auto`, `corpus` and `article` (`bench/run_gap.py --colons`); else
   (b) in `article` only (`--colons --modes article`: `auto` and `corpus` then unchanged
   by construction) if it passes them there; else nothing. Then read once on the test sets
   with rule 39's checks in the modes it applies in, and on MultiBoilerNet's rows. The 2026
   figure is not held out for it: it was written from one of those pages.
   Shipped, (a): `guard.RUN_ENDS_WITH_COLON`, every mode. Macro word F1 no / yes,
   `auto`, `corpus`, `article` (rule 58 on both sides): CleanEval dev and GoogleTrends train
   unchanged; the Dragnet train split 0.9216 / 0.9216, 0.7313 / 0.7313, 0.9701 / 0.9699;
   the 2026 pages 0.8074 / 0.8075, 0.7705 / 0.7705, 0.7661 / 0.7675, snippet F1 0.8537 /
   0.8539, 0.8199 / 0.8199, 0.8233 / 0.8240; 5 / 0 / 10 pages changed; lost against
   trafilatura 1 / 1, 4 / 4, 5 / 4 (m2865 saved in `article`). Read once (`--colons
   --test`): `auto` and `corpus` unchanged on CleanEval test, the Dragnet test split and
   GoogleTrends test (no page changes); `article` CleanEval test 0.8933 / 0.8934 (3 pages),
   the others unchanged. MultiBoilerNet's rows unchanged: `auto` 0.828 / 0.847 / 0.911,
   `article` 0.729 / 0.828 / 0.892.
60. Written 2026-12-02 (04:24), before its figures, after reading again why `auto` loses
   GoogleTrends test's gt_147 (docs/evaluation.md, rules 50 and 51): a table of batting
   figures, 1,579 cells, whose gold is the table. The labeller drops its cells, and every
   measure of what a page holds that the guard and `join_corpus` read counts words, where a
   figure counts none: the page holds 418 words by them, so no trigger fires and the page
   keeps 54. A page of figures (statistics, results, prices, a timetable) is content a
   crawl keeps, and its table is no run of prose. Candidate: after the guard and
   `join_corpus`, in the labeller modes, a decision that keeps fewer than
   `CORPUS_BELOW_WORDS` (100) words gets back the page's longest run of consecutive table
   cells (blocks whose element is `td` or `th`) when at least 50 of them and at least half
   are figures (a digit and no letter: `decide.is_figure`), none of them kept in a part no
   run of prose is taken from (`guard.outside`, as `join_corpus` reads it); the cleaned
   document says so with the guard's reason (`GuardReason.CONTENT_LOSS`). Selection, fixed
   now: (a) in every labeller mode if it passes rule 50's checks in `auto`, `corpus` and
   `article` on the training sets; else (b) in `auto` only if it passes them there; else
   nothing. Then read once on CleanEval test and the Dragnet test split with rule 39's
   checks, and on MultiBoilerNet's rows (no language more than 0.005 lower). GoogleTrends
   test is no held-out estimate for this rule: it was written from one of its pages.
   Shipped, (a): `guard.keep_figures`, `FIGURE_TABLE_MIN_CELLS`, every labeller mode.
   `bench/table_figures.py --tables`, off / on in one process: no page of the training sets
   changes in any mode (CleanEval dev, the Dragnet train split, GoogleTrends train, the 2026
   pages, `auto` out of fold: 0.8075 / 0.8539 as before; lost as before). Read once
   (`--tables --test`): CleanEval test and the Dragnet test split, no page changes in any
   mode; GoogleTrends test (not held out, see above) `auto` 0.7519 / 0.7598, lost 1 / 0
   (gt_147), `corpus` 0.6827 / 0.6951, lost 4 / 2 (gt_105 and gt_147), `article` 0.7180 /
   0.7180 (one page changes; it kept the table before). MultiBoilerNet's rows unchanged on
   and off: `auto` 0.828 / 0.847 / 0.911, `article` 0.729 / 0.828 / 0.892. What it
   estimates: nothing beyond those pages; no page of the held sets but two from one site has
   a table of figures as its only content. It costs 12 microseconds a page on CleanEval test
   (a page where the decision keeps 100 words stops at that count).
61. Written 2026-12-02 (04:36), before its figures: `join_corpus` in `article` too. `article`
   still loses the main content of 3 of CleanEval dev's 58 pages and 4 of the 2026 pages (a
   product, a listing, a collection), pages of short items with no run of prose, the kind
   `join_corpus` (rule 26) takes back in `auto`; `article`'s guard has nothing for them.
   Candidate: in `article`, a decision keeping fewer than `CORPUS_BELOW_WORDS` words is
   joined by the `corpus` labeller's blocks where that labeller keeps at least twice as many,
   outside the parts no run of prose is taken from, as in `auto` (`guard.joins_corpus`;
   `article`'s labeller reads no main element, so names of those parts count wherever they
   are). Selection, fixed now: shipped if it passes rule 50's checks in `article` on the
   training sets (no more 2026 pages lost against trafilatura, the 2026 word and snippet F1
   not lower, no training set more than 0.002 lower; `auto` and `corpus` unchanged by
   construction), then read once on the test sets with rule 39's checks (none more than
   0.002 lower) and on MultiBoilerNet's rows in `article` (none more than 0.005 lower).
   Not shipped: `article` fails the checks (`bench/run_gap.py --corpus-join`, without /
   with): CleanEval dev 0.8613 / 0.8778, lost 3 / 2; the Dragnet train split 0.9699 /
   **0.9657** (14 pages changed: short articles of 11 to 78 gold words, which `article` kept
   whole, joined by teasers and links, F1 from 0.96-1.00 to 0.19-0.81); GoogleTrends train
   unchanged; the 2026 pages 0.7675 / 0.7718, snippet F1 0.8240 / 0.8253, lost 4 / 4. A
   decision of under 100 words is no sign of lost content in `article`, where a short news
   item is a whole page's content. The test sets were not read.
62. Written 2026-12-02 (04:45), after rule 61's figures, before its own: rule 61 where
   `article` keeps nothing at all. A short news item is a whole page's content; an empty
   output never is while another labeller finds content on the page: CleanEval dev's page
   52, a newspaper's list of book reviews, comes out of `article` empty (the corpus labeller
   keeps its items). Candidate: in `article`, a decision that keeps no word (`guard._words`)
   is joined by the `corpus` labeller's blocks as rule 61 joins them
   (`guard.CORPUS_JOIN_EMPTY_MODES`; the limit is no tuned figure: nothing). Selection and
   checks as rule 61's, fixed now.
   Shipped (`guard.CORPUS_JOIN_EMPTY_MODES`, `guard.corpus_join_below`). `bench/run_gap.py
   --corpus-join-empty`, without / with, `article` (`auto` and `corpus` unchanged): CleanEval
   dev 0.8613 / 0.8778, lost 3 / 2 (page 52 saved); the Dragnet train split and GoogleTrends
   train unchanged; the 2026 pages 0.7675 / 0.7688, snippet F1 0.8240 / 0.8242, 3 pages
   changed, lost 4 / 4. Read once (`--test`): CleanEval test 0.8934 / 0.8941 (3 pages
   changed, 15 / 15 lost), the Dragnet test split and GoogleTrends test unchanged.
   MultiBoilerNet's `article` rows unchanged (0.729 / 0.828 / 0.892).
63. Written 2026-12-02 (17:54), after the figures below it names, before the one read that
   decides it. The peers had never been run on the MultiBoilerNet pages of Chinese, Japanese
   and Thai: `bench/multilingual_pipeline.py --peers` now scores every system's output text
   alike, by word alignment over characters (white space removed; white-space words are
   whole clauses there) against the pages' content rows. `auto` 0.933 / 0.847 / 0.963 against
   the best peer's 0.957 (readability) / 0.832 (boilerpy3) / 0.942 (trafilatura, precision):
   Chinese trails; `corpus` 0.927 / 0.926 / 0.937 and `article` 0.921 / 0.928 / 0.951, which
   read such pages through rule 48's pseudo-words. Rule 48 left `auto` out by MultiBoilerNet's
   own measure, macro F1 over rows (Japanese 0.847 to 0.837), where a row of "|" weighs as
   much as a paragraph; the benchmarks that judge the project score text. Read before this
   rule was written: rule 48's pseudo-words in `auto` too give 0.945 / 0.872 / 0.963 over
   characters (rows 0.835 / 0.837 / 0.911). Those pages chose rule 48 and now this, so they
   estimate nothing for it. Candidate: `auto` in `pipeline.PSEUDO_WORD_MODES`. Pages in
   spaced languages are untouched by construction (checked: no output of CleanEval dev and
   test, Dragnet and the 2026 pages differs, `bench/core_ab.py`). The decision, fixed now,
   is the one clean read: newspaper4k's real pages in those languages (three Chinese, two
   Japanese, one Thai, one Burmese; `bench/package_pages.py`, F1 over characters, as rule 48
   read them): shipped unless their mean over characters is more than 0.005 lower with it.
   Shipped (`pipeline.PSEUDO_WORD_MODES`): the seven pages 0.937 to 0.962 (the first two
   Chinese pages 0.902 to 0.970 and 0.881 to 0.989, the other five unchanged); newspaper4k's
   23 pages by words 0.891 to 0.896. No page in a spaced language changes (0 of 2,583), the
   CPU a Chinese or Japanese page costs does not move (rule 49 cut them for the page type
   already; its separate path is gone). Over characters, `auto` now leads every peer on the
   Japanese and Thai pages and trails readability on the Chinese ones, 0.945 against 0.957.
64. Written 2026-12-02 (18:03), after rule 63, before its figures. The labellers' `legal`
   pattern (`labeller._LEGAL_LITERALS`: "©", "opyright", "ights reserved", "rivacy", "erms
   of", "ookie"; a feature of every labeller and the guard's sign of a legal notice) is
   English but for "©": on a Chinese page the site's copyright and disclaimer notice
   ("版权与免责声明", "版权所有") reads as prose. Two pages showed it, both seen before this
   rule: MultiBoilerNet's zh/51 (the notice's three paragraphs kept by `auto`) and
   newspaper4k's chinese_article_001 ("中国日报网版权说明"), so neither set estimates it.
   Candidate: the same words in Chinese (simplified and traditional), Japanese and Korean
   (copyright, disclaimer, privacy, terms of use or service, no reproduction without
   permission), literals in scripts no training page's pattern search meets. No figure is
   tuned. Shipped if no page of CleanEval dev and test, Dragnet and the 2026 pages changes
   in any mode (`bench/core_ab.py`), and no language's F1 over characters, MultiBoilerNet's
   three sets (`--peers`) and newspaper4k's seven pages, is more than 0.005 lower in any
   mode.
   Not shipped. The native scanner (`_native/text_features._scan`) takes 32 literals whose
   first character is below U+0100, so the candidate was measured on the Python reference
   (`STREAM_CLEANER_NATIVE=0`), with each two-character word also as the pseudo-words may cut
   it ("版 权"): F1 over characters, MultiBoilerNet's Chinese / Japanese / Thai and
   newspaper4k's seven pages, `auto` 0.945 / 0.872 / 0.963 / 0.962 to 0.948 / 0.872 / 0.963
   / 0.962, `corpus` and `article` unchanged. A gain on one set's page or two does not pay
   for a wider native scanner. The literals tried, added to the `legal` group: 版权 版權 免责
   免責 隐私 隱私 转载 轉載 転載 条款 條款 規約 作権, each also with a space between its two
   characters, and 저작권, 무단 전재, 개인정보.

    PYTHONPATH=$PWD .venv/bin/python bench/googletrends_pages.py
    .cache/bench-venv/bin/python bench/quality.py --systems trafilatura,readability --save-outputs \
        --datasets cleaneval-dev,dragnet,googletrends-train,modern2026 \
        --dataset googletrends-train=googletrends-pages/train --out artifacts/peers
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py select      # the rule (~1 h)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py guard       # the guard's settings
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py folds       # fold labellers
    PYTHONPATH=$PWD .venv/bin/python bench/page_types.py --cv-only \
        --folds .cache/auto-training/folds                              # and page types
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py without-model  # rule 4 (~20 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py across-sets    # rule 5
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py main-trigger   # rules 6 to 10
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py comments       # rule 11 (--rule 12)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py marks          # rule 14 (--rule 15)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py kept-prose     # rule 23
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py main-share     # rule 24
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py corpus-join    # rule 25 (--rule 26)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py headings       # rule 27
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py weights        # rule 16 (~40 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py threshold      # rule 17
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py trees          # rule 19 (~10 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py types          # rule 20
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py labels         # rule 21
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py families       # rule 28
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py comment-limit  # rule 29
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py comment-limit --rule 30
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py forum-trigger  # rule 31
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py declared-types # rule 32 (~25 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py repeats        # rule 39
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py outside-main   # rule 40
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py peer-column    # rule 41 (~8 min;
        # readability's outputs of the four sets, saved by the quality.py line above)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py randomized     # rule 42 (~20 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py lm-ablation    # rule 43 (~10 min)
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py calls-to-action  # rule 45
    PYTHONPATH=$PWD .venv/bin/python bench/auto_training.py interface-lines  # rule 46

Pages are cached in ``.cache/auto-training/pages.pkl`` and each candidate's out-of-fold scores
in ``scores-NAME.pkl`` beside it (delete them after changing the parser or the features).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import pickle
import re
import sys
from pathlib import Path

import numpy as np

from stream_cleaner import guard as guard_module
from stream_cleaner import training
from stream_cleaner.evaluate import (
    SnippetCounts,
    align_words,
    check_snippets,
    lost_main_content,
    read_checks,
    read_outputs,
    score_page,
)
from stream_cleaner.labeller import (
    FEATURE_NAMES,
    TreeEnsemble,
    block_features,
    feature_names,
    labeller_path,
    load_labeller,
    unscored_score,
)
from stream_cleaner.lm import load_model
from stream_cleaner.page_structure import is_prose, score_context
from stream_cleaner.page_types import (
    FEATURE_NAMES_ALL,
    PAGE_TYPES,
    load_page_types,
    page_features,
)
from stream_cleaner.training import (
    MODE_PARAMS,
    NUM_TREES,
    TRAIN_PARAMS,
    add_class_features,
    add_score_context,
    add_structure_features,
    choose_threshold,
    cross_validate,
    export_trees,
    fit_trees,
    load_training_pages,
    page_files,
    page_folds,
    set_page_weights,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".cache" / "data"
CACHE = ROOT / ".cache" / "auto-training"
PEER_OUTPUTS = ROOT / "artifacts" / "peers" / "outputs"  # bench/quality.py --save-outputs's
SETS = {
    "cleaneval-dev": (DATA / "cleaneval" / "dev", None),
    "dragnet-train": (DATA / "dragnet", "train"),
    "googletrends-train": (DATA / "googletrends-pages" / "train", None),
    "modern2026": (DATA / "modern2026", None),
}
FOLDS = 5
CANDIDATES = {
    "stacked": {"params": MODE_PARAMS["article"], "trees": NUM_TREES["article"]},
    "stacked-large": {
        "params": {"num_leaves": 63, "max_depth": 8, "learning_rate": 0.1},
        "trees": 150,
    },
}
# Reported with each set held out (`across-sets --only --candidate NAME`), not candidates of
# rule 5: the trees of 2026-11-29 with the four sets weighing the same, or more regularised;
# then rule 16's (`training.WEIGHTS`), of which ``balanced`` is shipped (`SHIPPED`).
EXPLORED = {
    "balanced": {**CANDIDATES["stacked"], "weights": "sets"},
    "pages": {**CANDIDATES["stacked"], "weights": "pages"},
    "balanced-pages": {**CANDIDATES["stacked"], "weights": "sets+pages"},
    # rule 19's tree sizes, the sets weighing the same
    "balanced-small": {"params": {**MODE_PARAMS["article"], "num_leaves": 15, "max_depth": 5},
                       "trees": NUM_TREES["article"], "weights": "sets"},
    "balanced-large": {**CANDIDATES["stacked-large"], "weights": "sets"},
    "balanced-slow": {"params": {**MODE_PARAMS["article"], "learning_rate": 0.075},
                      "trees": 2 * NUM_TREES["article"], "weights": "sets"},
    "balanced-types": {**CANDIDATES["stacked"], "weights": "sets", "page_types": True},
    # rule 21's labels: a block is content when this share of its words align
    "balanced-share-0.3": {**CANDIDATES["stacked"], "weights": "sets", "content_share": 0.3},
    "balanced-share-0.7": {**CANDIDATES["stacked"], "weights": "sets", "content_share": 0.7},
    # rule 41's: one more column in both stages, whether readability's output holds the block
    "balanced-readability": {**CANDIDATES["stacked"], "weights": "sets", "column": "readability"},
    # rule 42's: more randomised trees
    "balanced-extra": {"params": {**MODE_PARAMS["article"], "extra_trees": True},
                       "trees": NUM_TREES["article"], "weights": "sets"},
    "balanced-half-columns": {"params": {**MODE_PARAMS["article"], "feature_fraction": 0.5},
                              "trees": NUM_TREES["article"], "weights": "sets"},
    # rules 28 and 43: the shipped labeller without one family of columns (`FEATURE_FAMILIES`)
    **{f"balanced-no-{family}": {**CANDIDATES["stacked"], "weights": "sets", "drop": family}
       for family in ("position", "page-size", "depth", "template", "perplexity")},
    "regularized": {
        "params": {**MODE_PARAMS["article"], "min_data_in_leaf": 200, "feature_fraction": 0.5,
                   "lambda_l2": 10.0},
        "trees": NUM_TREES["article"],
    },
}  # fmt: skip
# Rule 28: the columns that describe a site's template rather than a block, by family
_TEMPLATE_FAMILIES = {
    "position": ("position", "chars_before"),
    "page-size": ("log_page_blocks", "log_page_chars"),
    "depth": ("depth", "depth@-2", "depth@-1", "depth@+1", "depth@+2"),
}
FEATURE_FAMILIES = {
    **_TEMPLATE_FAMILIES,
    "template": tuple(name for names in _TEMPLATE_FAMILIES.values() for name in names),
    # rule 43: the columns the language model fills
    "perplexity": tuple(name for name in FEATURE_NAMES if "ppl" in name or name == "oov_rate"),
}
SHIPPED = "balanced"  # what `training.MODE_PARAMS` and `WEIGHTS_BY_MODE` ship for auto
GUARD_GRID = [(w, k) for w in (100, 200) for k in (0.2, 0.35, 0.5)]
# What no run of prose is taken from (`guard.OUTSIDE_GROUPS`, `guard.OUTSIDE_COLUMNS`): the
# first guard left out comment-marked blocks only; the shipped one (chosen 2026-11-29) also
# the nav, sidebar, footer and overlay groups, those elements and legal notices.
_TAGS = ("path_nav", "path_aside", "path_footer")
_REGIONS = ("comment", "nav", "sidebar", "footer")
GUARD_OUTSIDE = {
    "comments": (("comment",), ()),
    "tags": (("comment",), _TAGS),
    "regions": (_REGIONS, _TAGS),
    "regions+overlay": ((*_REGIONS, "overlay"), _TAGS),
    "shipped": (guard_module.OUTSIDE_GROUPS, guard_module.OUTSIDE_COLUMNS),
}
# the page_structure.STRUCTURE_FEATURE_NAMES column saying a block is in the main element
MAIN_IN_COLUMN = feature_names(class_features=True, structure_features=True).index("main_in")
COLUMNS = {name: i for i, name in enumerate(FEATURE_NAMES)}
PERPLEXITY_FEATURES = [FEATURE_NAMES.index(name) for name in FEATURE_FAMILIES["perplexity"]]


def load_pages() -> list:
    """The training pages with class and structure features, their set in ``source``."""
    path = CACHE / "pages.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    model = load_model()
    pages = []
    for name, (directory, split) in SETS.items():
        for page in load_training_pages(directory, split=split, model=model):
            page.source = name
            pages.append(page)
        print(f"{name}: loaded", file=sys.stderr, flush=True)
    add_class_features(pages)
    add_structure_features(pages)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(pages))
    return pages


def cached_out_of_fold(pages: list, name: str, *, by_set: bool = False) -> list:
    """`out_of_fold` of a candidate in the site folds, cached in ``scores-NAME.pkl`` (or with
    ``by_set`` each set held out in turn, ``scores-NAME-by-set.pkl``)."""
    path = CACHE / f"scores-{name}{'-by-set' if by_set else ''}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    candidate = {**CANDIDATES, **EXPLORED}[name]
    fold_of = [list(SETS).index(p.source) for p in pages] if by_set else None
    set_page_weights(pages, candidate.get("weights", "blocks"))
    types = page_types_out_of_fold(pages) if candidate.get("page_types") else None
    shipped_share = training.CONTENT_SHARE
    training.CONTENT_SHARE = candidate.get("content_share", shipped_share)  # read by `labels`
    first = [p.features for p in pages]
    if "drop" in candidate:  # rule 28: no tree reads these columns
        names = feature_names(class_features=True, structure_features=True)
        columns = [names.index(n) for n in FEATURE_FAMILIES[candidate["drop"]]]
        for page in pages:
            page.features = page.features.copy()
            page.features[:, columns] = 0.0
    shipped_names = training.column_names
    if "column" in candidate:  # rule 41: whether the peer's output holds each block's text
        for page, column in zip(pages, peer_columns(pages, candidate["column"]), strict=True):
            page.features = np.hstack((page.features, column))
        training.column_names = lambda width: tuple(f"column_{i}" for i in range(width))
    try:
        scores = out_of_fold(
            pages, params=candidate["params"], trees=candidate["trees"], fold_of=fold_of,
            types=types,
        )  # fmt: skip
    finally:
        set_page_weights(pages, "blocks")
        training.CONTENT_SHARE = shipped_share
        training.column_names = shipped_names
        for page, features in zip(pages, first, strict=True):
            page.features = features
    path.write_bytes(pickle.dumps(scores))
    return scores


def peer_columns(pages: list, peer: str, peer_outputs: Path = PEER_OUTPUTS) -> list:
    """Rule 41's column of each page: per block, whether ``peer``'s output of the page
    (`bench/quality.py --save-outputs` under ``peer_outputs``) holds the block's text."""
    outputs = {s: read_outputs(peer_outputs / folder / peer) for s, folder in PEER_DATASETS.items()}
    columns = []
    for page in pages:
        held = " ".join(outputs[page.source].get(page.name, "").split())
        kept = [float(bool(b.text) and " ".join(b.text.split()) in held) for b in page.blocks]
        columns.append(np.asarray(kept).reshape(-1, 1))
    return columns


def out_of_fold(
    pages: list,
    *,
    params: dict,
    trees: int,
    stacked: bool = True,
    fold_of: list | None = None,
    types: list[str] | None = None,
) -> list:
    """Out-of-fold scores of every page (the second stage's when ``stacked``), in the folds of
    their sites, or in ``fold_of`` (each page's fold); with ``types`` (each page's), the second
    stage also reads the page's type, one 0/1 column a type (rule 20)."""
    validate = functools.partial(
        cross_validate, num_trees=trees, params=params, by_site=True, fold_of=fold_of,
        folds=FOLDS if fold_of is None else max(fold_of) + 1,
    )  # fmt: skip
    scores = validate(pages)
    if not stacked:
        return scores
    first = [p.features for p in pages]
    stacked_names = training.column_names
    try:
        add_score_context(pages, scores)
        if types is not None:
            training.column_names = lambda width: (  # the second stage's, then the types'
                *stacked_names(width - len(PAGE_TYPES)),
                *(f"page_type_{t}" for t in PAGE_TYPES),
            )
            for page, kind in zip(pages, types, strict=True):
                one_hot = np.array([float(kind == t) for t in PAGE_TYPES])
                page.features = np.hstack((page.features, np.tile(one_hot, (len(page.blocks), 1))))
        return validate(pages)
    finally:  # the pages and `training` as they were, whatever failed
        for page, features in zip(pages, first, strict=True):
            page.features = features
        training.column_names = stacked_names


def per_set(pages: list, keeps: list) -> dict[str, float]:
    """Macro word-alignment F1 of each set."""
    out: dict[str, list[float]] = {}
    for page, keep in zip(pages, keeps, strict=True):
        out.setdefault(page.source, []).append(align_words(page.text(keep), page.gold).f1)
    return {name: float(np.mean(f1s)) for name, f1s in out.items()}


def modern_checks(pages: list, keeps: list) -> tuple[float, dict[str, float]]:
    """The 2026 pages' snippet F1 (pooled) and macro word F1 by page type."""
    checks = read_checks(SETS["modern2026"][0] / "checks.json")
    pooled = SnippetCounts()
    by_type: dict[str, list[float]] = {}
    for page, keep in zip(pages, keeps, strict=True):
        if page.source != "modern2026":
            continue
        text = page.text(keep)
        pooled += check_snippets(text, checks[page.name])
        kind = checks[page.name].page_type
        by_type.setdefault(kind, []).append(align_words(text, page.gold).f1)
    return pooled.f1, {k: float(np.mean(v)) for k, v in sorted(by_type.items())}


# The second trigger's settings (`guard`), in the order of `guarded`'s ``main``.
MAIN_NAMES = ("MAIN_MIN_WORDS", "MAIN_MIN_KEPT_SHARE", "MAIN_KEEP", "MAIN_KEPT_FROM",
              "MAIN_ALL_BELOW_WORDS", "MAIN_MAX_KEPT_WORDS", "MAIN_MAX_KEPT_FROM")  # fmt: skip
NO_MAIN = (None, 0.5, "all", "main", None, None, "page")


def shipped_main() -> tuple:
    return tuple(getattr(guard_module, n) for n in MAIN_NAMES)


def guarded(
    pages: list,
    keeps: list,
    min_words: int,
    min_share: float,
    *,
    what: str = "main",
    outside: str = "shipped",
    main: tuple | None = None,
    types: list[str] | None = None,
    forum: np.ndarray | None = None,
) -> list:
    """The decisions with the guard at these settings; ``what`` it keeps when it steps in:
    the run's prose blocks (``run``) or also the main element's (``main``, as shipped for
    the auto labeller); ``outside``: what no run is taken from (`GUARD_OUTSIDE`); ``main``:
    the second trigger's settings (`MAIN_NAMES`; ``None``: as shipped, `NO_MAIN`: none),
    and after them, for rule 10, the page types it fires on, ``types`` giving each page's
    (`page_types_out_of_fold`)."""
    main = main or shipped_main()
    if len(main) > len(MAIN_NAMES):  # rule 10: the trigger on pages of these types only
        gate = main[len(MAIN_NAMES)]
        on = guarded(pages, keeps, min_words, min_share, what=what, outside=outside,
                     main=main[: len(MAIN_NAMES)])  # fmt: skip
        off = guarded(pages, keeps, min_words, min_share, what=what, outside=outside, main=NO_MAIN)
        return [a if kind in gate else b for a, b, kind in zip(on, off, types, strict=True)]
    names = ("MIN_RUN_WORDS", "MIN_KEPT_SHARE", "OUTSIDE_GROUPS", "OUTSIDE_COLUMNS", *MAIN_NAMES)
    saved = [getattr(guard_module, n) for n in names]
    values = (min_words, min_share, *GUARD_OUTSIDE[outside], *main)
    for name, value in zip(names, values, strict=True):
        setattr(guard_module, name, value)
    try:
        out = []
        for i, (page, keep) in enumerate(zip(pages, keeps, strict=True)):
            main_in = page.features[:, MAIN_IN_COLUMN] > 0 if what == "main" else None
            p = None if forum is None else float(forum[i])
            chosen, _ = guard_module.guard_content(
                list(keep), page.blocks, page.features, main_in, p, mode="auto"
            )
            out.append(np.asarray(chosen))
        return out
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(guard_module, name, value)


def row(name: str, figures: dict[str, float], extra: str = "") -> str:
    mean = float(np.mean(list(figures.values())))
    cells = " | ".join(f"{figures[s]:.4f}" for s in SETS)
    return f"| {name} | {cells} | **{mean:.4f}** | {extra} |"


def select() -> None:
    pages = load_pages()
    header = "| candidate | " + " | ".join(SETS) + " | mean | threshold, snippet F1 (2026) |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    results = {}
    for name in CANDIDATES:
        scores = cached_out_of_fold(pages, name)
        threshold, _ = choose_threshold(pages, scores, per_source=True)
        keeps = [s > threshold for s in scores]
        figures = per_set(pages, keeps)
        snippet, _ = modern_checks(pages, keeps)
        results[name] = (float(np.mean(list(figures.values()))), threshold, keeps)
        print(row(name, figures, f"{threshold:g}, {snippet:.4f}"), flush=True)
    winner = max(results, key=lambda n: results[n][0])
    _, threshold, keeps = results[winner]
    print(f"\nwinner: {winner} (threshold {threshold:g})\n", flush=True)
    _, by_type = modern_checks(pages, keeps)
    print("2026 pages by type: " + ", ".join(f"{k} {v:.3f}" for k, v in by_type.items()))

    print("\n## the guard on the winner's decisions\n")
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    for words, share in GUARD_GRID:
        chosen = guarded(pages, keeps, words, share, main=NO_MAIN)
        fired = sum(1 for a, b in zip(chosen, keeps, strict=True) if (a != b).any())
        snippet, _ = modern_checks(pages, chosen)
        print(row(f"{words} words, {share}", per_set(pages, chosen),
                  f"{fired} pages, {snippet:.4f}"), flush=True)  # fmt: skip

    print("\n## reported, not chosen (the winner's parameters)\n")
    params, trees = CANDIDATES[winner]["params"], CANDIDATES[winner]["trees"]
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    scores = out_of_fold(pages, params=params, trees=trees, stacked=False)
    report_ablation(pages, scores, "one stage (no stack)")
    with_structure = [p.features for p in pages]
    base_width = len(feature_names(class_features=True))
    for page in pages:
        page.features = page.features[:, :base_width]
    scores = out_of_fold(pages, params=params, trees=trees, stacked=False)
    report_ablation(pages, scores, "one stage, no structure features")
    for page, features in zip(pages, with_structure, strict=True):
        page.features = features.copy()
        page.features[:, PERPLEXITY_FEATURES] = np.nan
    scores = out_of_fold(pages, params=params, trees=trees)
    report_ablation(pages, scores, "stacked, no perplexity features")
    for page, features in zip(pages, with_structure, strict=True):
        page.features = features


PEER_DATASETS = {
    "cleaneval-dev": "cleaneval-dev",
    "dragnet-train": "dragnet",
    "googletrends-train": "googletrends-train",
    "modern2026": "modern2026",
}


def lost_pages(pages: list, keeps: list, peer_outputs: Path, peer: str = "trafilatura") -> dict:
    """Per set, the pages whose main content the decisions lose where ``peer`` keeps it
    (`evaluate.lost_main_content`), from the peer's saved outputs
    (``OUT/outputs/DATASET/PEER/NAME.txt``, as `bench/quality.py --save-outputs` writes them)."""
    theirs = {
        name: read_outputs(peer_outputs / dataset / peer) for name, dataset in PEER_DATASETS.items()
    }
    lost: dict[str, int] = dict.fromkeys(SETS, 0)
    for page, keep in zip(pages, keeps, strict=True):
        other = theirs[page.source].get(page.name)
        if other is None:
            continue
        ours = score_page(page.name, page.text(keep), page.gold)
        if lost_main_content(ours, score_page(page.name, other, page.gold)):
            lost[page.source] += 1
    return lost


def choose_guard(
    peer_outputs: Path, candidate: str, what: str = "main", outside: tuple[str, ...] = ()
) -> None:
    """Rule 2: the guard's settings by the pages of lost main content, then the mean F1
    (``what``: what the guard keeps when it steps in; ``outside``: the `GUARD_OUTSIDE`
    variants to choose among, all by default; `guarded`)."""
    pages = load_pages()
    scores = cached_out_of_fold(pages, candidate)
    threshold, _ = choose_threshold(pages, scores, per_source=True)
    keeps = [s > threshold for s in scores]
    figures = per_set(pages, keeps)
    base = float(np.mean(list(figures.values())))
    lost = lost_pages(pages, keeps, peer_outputs)
    print(f"{candidate}, threshold {threshold:g}: mean F1 {base:.4f}, lost {lost}\n")
    header = "| guard | " + " | ".join(SETS) + " | mean | pages changed, lost (per set) |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    best = None
    for left_out in outside or GUARD_OUTSIDE:
        for words, share in GUARD_GRID:
            chosen = guarded(pages, keeps, words, share, what=what, outside=left_out, main=NO_MAIN)
            fired = sum(1 for a, b in zip(chosen, keeps, strict=True) if (a != b).any())
            figures = per_set(pages, chosen)
            mean = float(np.mean(list(figures.values())))
            lost = lost_pages(pages, chosen, peer_outputs)
            total = sum(lost.values())
            per = " / ".join(str(lost[s]) for s in SETS)
            name = f"{left_out}: {words} words, {share}"
            print(row(name, figures, f"{fired}, {total} ({per})"), flush=True)
            if best is None or (total, -mean) < (best[0], -best[1]):
                best = (total, mean, name)
    assert best is not None
    total, mean, name = best
    verdict = "ship it" if base - mean < 0.002 else "do not ship it"
    print(f"\nchosen: {name} ({total} pages lost, mean F1 {mean:.4f} against "
          f"{base:.4f} without the guard: {verdict})")  # fmt: skip


def across_sets(peer_outputs: Path, candidates: tuple[str, ...] = ()) -> None:
    """Rule 5 (reported): each candidate trained on three of the sets and scored on the fourth,
    at the threshold the site folds chose for it (`select`), with the shipped guard; beside it
    the same out of the site folds, and trafilatura on the same pages. A set's own layouts,
    years and gold never reach its labeller here, as for a benchmark this project does not
    hold. (The second stage's rows of the training pages carry first-stage scores from
    labellers that saw the held-out set, as in the site folds.)"""
    pages = load_pages()
    theirs = {
        name: read_outputs(peer_outputs / dataset / "trafilatura")
        for name, dataset in PEER_DATASETS.items()
    }
    peer: dict[str, list[float]] = {}
    for page in pages:
        text = theirs[page.source].get(page.name, "")
        peer.setdefault(page.source, []).append(align_words(text, page.gold).f1)
    peer_row = {name: float(np.mean(f1s)) for name, f1s in peer.items()}
    header = "| labeller | " + " | ".join(SETS) + " | mean | pages lost (per set) |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    print(row("trafilatura", peer_row), flush=True)
    words, share = guard_module.MIN_RUN_WORDS, guard_module.MIN_KEPT_SHARE
    for name in candidates or CANDIDATES:
        threshold, _ = choose_threshold(pages, cached_out_of_fold(pages, name), per_source=True)
        for folds_name, by_set in (("site folds", False), ("one set held out", True)):
            scores = cached_out_of_fold(pages, name, by_set=by_set)
            keeps = guarded(pages, [s > threshold for s in scores], words, share)
            lost = lost_pages(pages, keeps, peer_outputs)
            per = " / ".join(str(lost[s]) for s in SETS)
            print(row(f"{name}, {folds_name}", per_set(pages, keeps), per), flush=True)


# `MAIN_NAMES`: rule 6's variants, rule 7's, then rule 8's (on rule 6's choice)
# Rule 10: the page types the second trigger (rules 6 and 8's) fires on.
TYPE_GATES = {
    "not article": tuple(t for t in PAGE_TYPES if t != "article"),
    "not article nor service": tuple(t for t in PAGE_TYPES if t not in ("article", "service")),
    "forum": ("forum",),
}


_NO_CAP = (None, "page")
_RULE_8 = (100, 0.5, "inside", "main", 50)
MAIN_TRIGGER_GRID = {
    "6": [
        (w, k, keep, "main", None, *_NO_CAP)
        for w in (100, 200)
        for k in (0.2, 0.35, 0.5)
        for keep in ("prose", "all", "inside")
    ]
    + [
        (w, k, keep, "page", None, *_NO_CAP)
        for w in (100, 200)
        for k in (0.2, 0.25, 0.35)
        for keep in ("prose", "all")
    ],
    "8": [(100, 0.5, "inside", "main", n, *_NO_CAP) for n in (25, 50, 100, 150)],
    "9": [(*_RULE_8, *_NO_CAP)]
    + [(*_RULE_8, a, where) for where in ("main", "page") for a in (100, 200, 300, 500)],
    # rule 10: a page type gate after the settings (`guarded`)
    "10": [(*_RULE_8, *_NO_CAP)] + [(*_RULE_8, *_NO_CAP, gate) for gate in TYPE_GATES.values()],
}
RULE_BASE = {
    "6": NO_MAIN, "8": (100, 0.5, "inside", "main", None, *_NO_CAP), "9": NO_MAIN, "10": NO_MAIN
}  # fmt: skip


def page_types_out_of_fold(pages: list) -> list[str]:
    """Each page's type (`page_types`), the most probable in `page_type_probabilities`;
    ``""`` for a page without blocks."""
    probabilities = page_type_probabilities(pages)
    return [
        PAGE_TYPES[int(np.argmax(row))] if page.blocks else ""
        for page, row in zip(pages, probabilities, strict=True)
    ]


# Rule 32: extra page-type columns, one row a page, that `page_type_probabilities` trains
# its models with (`declared_types` sets them while it runs); None: the shipped columns
page_type_columns: np.ndarray | None = None


def page_type_probabilities(pages: list, *, seed: int | None = None) -> np.ndarray:
    """Each page's probability of each type (`PAGE_TYPES`, one row a page; zeros for a page
    without blocks): the 2026 pages' from models trained, by `bench/page_types.py`'s recipe
    (``seed``: its own by default), without the page's site fold; the other sets' from the
    shipped model, which learnt the 2026 pages only. Cached in ``page-type-probabilities.pkl``.
    With `page_type_columns`, the models read them too, the other sets' model is trained
    here on every 2026 page, and nothing is cached."""
    path = CACHE / "page-type-probabilities.pkl"
    shipped_recipe = page_type_columns is None and seed is None
    if shipped_recipe and path.exists():
        return pickle.loads(path.read_bytes())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import page_types as recipe

    checks = read_checks(SETS["modern2026"][0] / "checks.json")
    out = np.zeros((len(pages), len(PAGE_TYPES)))
    rows = [
        page_features(page.blocks, page.features, page.url, class_words=True)
        if page.blocks
        else None
        for page in pages
    ]
    names = FEATURE_NAMES_ALL
    if page_type_columns is not None:
        rows = [r if r is None else np.concatenate([r, page_type_columns[i]])
                for i, r in enumerate(rows)]  # fmt: skip
        names += tuple(f"declared_{k}" for k in range(page_type_columns.shape[1]))
    modern = [i for i, p in enumerate(pages) if p.source == "modern2026" and p.blocks]
    x = np.vstack([rows[i] for i in modern])
    kinds = [checks[pages[i].name].page_type for i in modern]
    y = np.array([PAGE_TYPES.index(recipe.ALIASES.get(k, k)) for k in kinds])
    fold_of = np.array(page_folds([pages[i] for i in modern], FOLDS, by_site=True))
    saved_seed = recipe.PARAMS["seed"]
    recipe.PARAMS["seed"] = saved_seed if seed is None else seed
    try:
        out[modern] = recipe.cross_validate(x, y, fold_of, names)
        others = [i for i, p in enumerate(pages) if p.source != "modern2026" and p.blocks]
        if page_type_columns is None:
            shipped = load_page_types()
            for i in others:
                out[i] = shipped.probabilities(rows[i], class_words=True)
        elif others:
            out[others] = recipe.fit(x, y, names).predict(np.vstack([rows[i] for i in others]))
    finally:
        recipe.PARAMS["seed"] = saved_seed
    if shipped_recipe:
        path.write_bytes(pickle.dumps(out))
    return out


def held_out_decisions(
    candidate: str, pages: list | None = None, threshold: float | None = None
) -> tuple[list, dict[bool, list]]:
    """The training pages and the candidate's decisions on them, with each set held out
    (``True``) and in the site folds (``False``), at ``threshold`` (default: the one the site
    folds chose)."""
    pages = pages if pages is not None else load_pages()
    if threshold is None:
        scores = cached_out_of_fold(pages, candidate)
        threshold, _ = choose_threshold(pages, scores, per_source=True)
    return pages, {
        by_set: [s > threshold for s in cached_out_of_fold(pages, candidate, by_set=by_set)]
        for by_set in (True, False)
    }


def main_trigger(
    peer_outputs: Path, candidate: str = "stacked", rule: str = "8", threshold: float | None = None
) -> None:
    """Rules 6 (with 7's variants) to 10: the guard's second trigger (`guard.MAIN_MIN_WORDS`)
    on the candidate's decisions with each set held out and in the site folds, against the
    guard the rule started from (`RULE_BASE`)."""
    pages, decisions = held_out_decisions(candidate, threshold=threshold)
    words, share = guard_module.MIN_RUN_WORDS, guard_module.MIN_KEPT_SHARE
    types = page_types_out_of_fold(pages) if rule == "10" else None
    header = "| second trigger | " + " | ".join(SETS) + " | held-out mean | pages changed, "
    header += "lost (per set) | site-fold mean, lost |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 3), flush=True)
    before = {
        by_set: guarded(pages, keeps, words, share, main=RULE_BASE[rule], types=types)
        for by_set, keeps in decisions.items()
    }
    results = []
    for main in [RULE_BASE[rule], *MAIN_TRIGGER_GRID[rule]]:
        figures = {}
        for by_set, keeps in decisions.items():
            chosen = guarded(pages, keeps, words, share, main=main, types=types)
            fired = sum(1 for a, b in zip(chosen, before[by_set], strict=True) if (a != b).any())
            per = per_set(pages, chosen)
            figures[by_set] = (per, float(np.mean(list(per.values()))), fired,
                               lost_pages(pages, chosen, peer_outputs))  # fmt: skip
        per, mean, fired, lost = figures[True]
        _, site_mean, _, site_lost = figures[False]
        name = "the guard before" if main is RULE_BASE[rule] else ", ".join(map(str, main))
        lost_per = " / ".join(str(lost[s]) for s in SETS)
        extra = f"{fired}, {sum(lost.values())} ({lost_per}) | "
        extra += f"{site_mean:.4f}, {sum(site_lost.values())}"
        print(row(name, per, extra), flush=True)
        results.append((main, sum(lost.values()), mean, site_mean, per, figures[False][0]))
    if rule in ("9", "10"):
        choose_bounded(results)
        return
    _, base_lost, base_mean, base_site, *_ = results[0]
    passing = [
        r
        for r in results[1:]
        if base_mean - r[2] <= 0.002 and base_site - r[3] < 0.002 and r[1] < base_lost
    ]
    if not passing:
        print("\nchosen: none (no variant passes the rule)")
        return
    main, lost, mean, site_mean, *_ = min(passing, key=lambda r: (r[1], -r[2]))
    print(f"\nchosen: {main} ({lost} pages lost against {base_lost}; held-out mean "
          f"{mean:.4f} against {base_mean:.4f}, site folds {site_mean:.4f} against "
          f"{base_site:.4f})")  # fmt: skip


COMMENT_GRID = (50, 100, 200, 400)  # rule 11: `guard.COMMENTS_BESIDE_PROSE_WORDS`


def drop_comments(
    pages: list,
    keeps: list,
    min_words: int | None,
    *,
    article: int | None = None,
    types: list[str] | None = None,
    forum: np.ndarray | None = None,
) -> list:
    """Rule 11: each decision through `guard.drop_comments` at ``min_words`` (``None``: as it
    is); rule 12: at ``article`` on pages whose type (``types``) is an article; rule 30: the
    page's ``forum`` probability (``None``: not known, as rules 11 to 29 measured)."""
    if min_words is None:
        return keeps
    names = ("COMMENTS_BESIDE_PROSE_WORDS", "COMMENTS_BESIDE_ARTICLE_WORDS")
    saved = [getattr(guard_module, n) for n in names]
    for name, value in zip(names, (min_words, article or min_words), strict=True):
        setattr(guard_module, name, value)
    try:
        return [
            np.asarray(guard_module.drop_comments(
                list(keep), page.blocks, page.features, types[i] if types else "",
                None if forum is None else float(forum[i]),
            ))
            for i, (page, keep) in enumerate(zip(pages, keeps, strict=True))
        ]  # fmt: skip
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(guard_module, name, value)


COMMENT_ARTICLE_GRID = (50, 100, 200)  # rule 12: the limit on pages of type article


def comments(
    peer_outputs: Path, candidate: str = "stacked", rule: str = "11", threshold: float | None = None
) -> None:
    """Rules 11 and 12: readers' comments dropped beside kept prose (`drop_comments`), before
    the shipped guard, on the candidate's decisions with each set held out and in the site
    folds."""
    pages, decisions = held_out_decisions(candidate, threshold=threshold)
    words, share = guard_module.MIN_RUN_WORDS, guard_module.MIN_KEPT_SHARE
    if rule == "11":
        variants = [(None, None), *((n, None) for n in COMMENT_GRID)]
        types = None
    else:
        shipped = guard_module.COMMENTS_BESIDE_PROSE_WORDS
        variants = [(shipped, None), *((shipped, a) for a in COMMENT_ARTICLE_GRID)]
        types = page_types_out_of_fold(pages)
    header = "| words kept outside comments (on articles) | " + " | ".join(SETS)
    header += " | held-out mean | lost (per set) | site-fold mean, lost |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 3), flush=True)
    results = []
    for min_words, article in variants:
        chosen = {
            by_set: guarded(pages, drop_comments(pages, keeps, min_words, article=article,
                                                 types=types), words, share)
            for by_set, keeps in decisions.items()
        }  # fmt: skip
        name = "none" if min_words is None else f"{min_words} ({article or min_words})"
        results.append(bounded_result(pages, chosen, peer_outputs, name, (min_words, article)))
    choose_bounded(results)


def bounded_result(
    pages: list, chosen: dict[bool, list], peer_outputs: Path, name: str, key: object
) -> tuple:
    """A variant's row, printed, and its entry for `choose_bounded`, from its decisions with
    each set held out (``True``) and in the site folds (``False``)."""
    figures = {}
    for by_set, keeps in chosen.items():
        per = per_set(pages, keeps)
        figures[by_set] = (per, float(np.mean(list(per.values()))),
                           lost_pages(pages, keeps, peer_outputs))  # fmt: skip
    per, mean, lost = figures[True]
    site_per, site_mean, site_lost = figures[False]
    lost_per = " / ".join(str(lost[s]) for s in SETS)
    extra = f"{sum(lost.values())} ({lost_per}) | {site_mean:.4f}, {sum(site_lost.values())}"
    print(row(name, per, extra), flush=True)
    return key, sum(lost.values()), mean, site_mean, per, site_per


# Rule 14: the groups whose names count only below the main element (`guard.BELOW_MAIN_GROUPS`)
BELOW_MAIN_VARIANTS = {
    "(a) every group": guard_module.OUTSIDE_GROUPS,
    "(b) all but comment": tuple(g for g in guard_module.OUTSIDE_GROUPS if g != "comment"),
}


def marks(
    peer_outputs: Path, candidate: str = "stacked", rule: str = "14", threshold: float | None = None
) -> None:
    """Rules 14 and 15: the shipped rules (11 and 12, then the guard) with a part's name
    counting only below the page's main element, on the candidate's decisions with each set
    held out and in the site folds."""
    pages, decisions = held_out_decisions(candidate, threshold=threshold)
    words, share = guard_module.MIN_RUN_WORDS, guard_module.MIN_KEPT_SHARE
    types = page_types_out_of_fold(pages)
    article = guard_module.COMMENTS_BESIDE_ARTICLE_WORDS
    dropped = {
        by_set: drop_comments(pages, keeps, guard_module.COMMENTS_BESIDE_PROSE_WORDS,
                              article=article, types=types)
        for by_set, keeps in decisions.items()
    }  # fmt: skip
    header = "| names counting only below the main element | " + " | ".join(SETS)
    header += " | held-out mean | lost (per set) | site-fold mean, lost |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 3), flush=True)
    setting = "BELOW_MAIN_GROUPS" if rule == "14" else "BELOW_MAIN_IN_THREADS"
    saved = getattr(guard_module, setting)
    variants = BELOW_MAIN_VARIANTS if rule == "14" else {"(c) comment, in threads": ("comment",)}
    results = []
    try:
        for name, groups in {"shipped": saved, **variants}.items():
            setattr(guard_module, setting, groups)
            chosen = {b: guarded(pages, keeps, words, share) for b, keeps in dropped.items()}
            results.append(bounded_result(pages, chosen, peer_outputs, name, groups))
    finally:
        setattr(guard_module, setting, saved)
    choose_bounded(results)


# Rule 16: the candidates for how the training blocks weigh (`training.set_page_weights`)
WEIGHTS = {"blocks": "stacked", "sets": "balanced", "pages": "pages",
           "sets+pages": "balanced-pages"}  # fmt: skip
# Rule 19: the candidates for the trees' size, the sets weighing the same
TREE_SHAPES = {"shipped": "balanced", "smaller": "balanced-small", "larger": "balanced-large",
               "slower": "balanced-slow"}  # fmt: skip
# Rule 20: the page's type as the second stage's input
TYPE_INPUT = {"shipped": "balanced", "page type": "balanced-types"}
# Rule 28: the labeller without the columns of a site's template
FAMILIES = {
    "shipped": "balanced",
    **{f"without {f}": f"balanced-no-{f}" for f in (*_TEMPLATE_FAMILIES, "template")},
}
# Rule 43, a record: the shipped labeller without the language model's columns
LM_ABLATION = {"shipped": "balanced", "without the perplexity features": "balanced-no-perplexity"}
# Rule 21: the share of a block's words aligned with the gold that makes it content
CONTENT_SHARES = {"0.5": "balanced", "0.3": "balanced-share-0.3", "0.7": "balanced-share-0.7"}
# Rule 41, a record: the shipped labeller with readability's decision as one more column
PEER_COLUMN = {"shipped": "balanced", "with a readability column": "balanced-readability"}
# Rule 42: more randomised trees
RANDOMIZED = {"shipped": "balanced", "extra trees": "balanced-extra",
              "half the columns a tree": "balanced-half-columns"}  # fmt: skip


# Rule 23: the guard's limit on the prose the decision keeps over the whole page
# (`guard.PAGE_KEPT_SHARE`, `guard.PAGE_KEPT_WORDS`)
PAGE_KEPT_VARIANTS = {"shipped": (None, None), "C 0.5": (0.5, None), "C 1": (1.0, None),
                      "K 200": (None, 200), "K 400": (None, 400)}  # fmt: skip


def kept_prose(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 23: the shipped rules with the guard's limit on the prose kept over the whole
    page, chosen by `bounded_limits`."""
    bounded_limits(
        peer_outputs, candidate, threshold, "limit on the prose kept over the page",
        {name: {"PAGE_KEPT_SHARE": c, "PAGE_KEPT_WORDS": k}
         for name, (c, k) in PAGE_KEPT_VARIANTS.items()},
    )  # fmt: skip


# Rule 24: the largest share of the page's words the main element the guard keeps may hold
# (`guard.MAIN_MAX_PAGE_SHARE`)
MAIN_SHARE_VARIANTS = {"shipped": None, "M 0 (the run alone)": 0.0, "M 0.5": 0.5, "M 0.8": 0.8}


def main_share(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 24: the shipped rules with the guard keeping the main element too only when it is
    less than a share of the page, chosen as rule 23 chooses."""
    bounded_limits(
        peer_outputs, candidate, threshold, "largest share of the page kept as the main element",
        {name: {"MAIN_MAX_PAGE_SHARE": m} for name, m in MAIN_SHARE_VARIANTS.items()},
    )  # fmt: skip


def bounded_limits(
    peer_outputs: Path, candidate: str, threshold: float, what: str, variants: dict
) -> None:
    """Rules 23 to 26: the shipped rules with each variant's `guard` settings (a dict), and
    then the variant's function of the pages and their decisions (or a pair of both), on
    the candidate's decisions with each set held out and in the site folds; among the
    variants (the first is the shipped one) no set loses more than 0.002 with, held out and
    in the site folds, and that lose no more pages held out, the highest held-out mean wins,
    if it is higher than the shipped one's."""
    pages, decisions = held_out_decisions(candidate, threshold=threshold)
    types = page_types_out_of_fold(pages)
    header = f"| {what} | " + " | ".join(SETS)
    header += " | held-out mean | lost (per set) | site-fold mean, lost |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 3), flush=True)
    variants = {  # each as (`guard` settings, a function after the shipped rules or None)
        name: v if isinstance(v, tuple) else (v, None) if isinstance(v, dict) else ({}, v)
        for name, v in variants.items()
    }
    saved = {n: getattr(guard_module, n) for settings, _ in variants.values() for n in settings}
    results = []
    try:
        for name, (settings, after) in variants.items():
            for setting, value in saved.items():  # each variant from the shipped settings
                setattr(guard_module, setting, settings.get(setting, value))
            chosen = {b: shipped_rules(pages, keeps, types) for b, keeps in decisions.items()}
            if after is not None:
                chosen = {b: after(pages, keeps) for b, keeps in chosen.items()}
            results.append(bounded_result(pages, chosen, peer_outputs, name, name))
    finally:
        for setting, value in saved.items():
            setattr(guard_module, setting, value)
    *_, base_held, base_site = results[0]
    print(f"\n| {what} | site folds: " + " | ".join(SETS) + " | sets below the shipped |")
    print("|---|" + "---:|" * (len(SETS) + 1))
    for r in results:
        below = [
            s for s in SETS if base_held[s] - r[4][s] > 0.002 or base_site[s] - r[5][s] > 0.002
        ]
        print(row(r[0], r[5], ", ".join(below) or "none"))
    passing = [
        r for r in results
        if r[1] <= results[0][1] and all(
            base_held[s] - r[4][s] <= 0.002 and base_site[s] - r[5][s] <= 0.002 for s in SETS
        )
    ]  # fmt: skip
    best = max(passing, key=lambda r: r[2])
    chosen = best if best[2] > results[0][2] else results[0]
    print(f"\npassing: {', '.join(r[0] for r in passing)}; chosen: {chosen[0]} "
          f"(held-out mean {chosen[2]:.4f}, {chosen[1]} pages lost)")  # fmt: skip


# Rule 25: the most words `auto` keeps on a page where the corpus labeller's decision joins it
CORPUS_BELOW_WORDS = (50, 100, 200)


def corpus_joined(pages: list, keeps: list, below: int) -> list:
    """Rule 25: each page's decision joined by the shipped corpus labeller's (every block
    either keeps) where it keeps fewer than ``below`` white-space words and the corpus
    labeller at least twice as many; CleanEval dev's pages, which the corpus labeller
    learnt, as they are. (Rule 26, shipped, leaves out some parts: `guard.join_corpus`.)"""
    corpus = load_labeller("corpus")
    width = len(FEATURE_NAMES)
    out = []
    for page, decision in zip(pages, keeps, strict=True):
        keep = np.asarray(decision, dtype=bool)
        if page.source != "cleaneval-dev":
            words = np.array([len(b.text.split()) for b in page.blocks])
            kept = words[keep].sum()
            if kept < below:
                theirs = corpus.predict(np.ascontiguousarray(page.features[:, :width]))
                if words[theirs].sum() >= 2 * max(kept, 1):
                    keep = keep | theirs
        out.append(keep)
    return out


def corpus_join(
    peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0, rule: str = "25"
) -> None:
    """Rules 25 and 26: the shipped rules without rule 26's join, then the corpus labeller's
    decision joined to small ones (25: every block it keeps; 26: `guard.join_corpus`, at
    each of the limits)."""
    off = {"CORPUS_BELOW_WORDS": None}
    if rule == "25":
        variants = {f"{w} words": (off, functools.partial(corpus_joined, below=w))
                    for w in CORPUS_BELOW_WORDS}  # fmt: skip
    else:
        variants = {f"{w} words": {"CORPUS_BELOW_WORDS": w} for w in CORPUS_BELOW_WORDS}
    bounded_limits(
        peer_outputs, candidate, threshold, "corpus joins a decision of fewer words than",
        {"no join": off, **variants},
    )  # fmt: skip


def headings_before_prose(pages: list, keeps: list) -> list:
    """Rule 27's variant (b): `guard.keep_headings` at 20 words, the next block counting as
    kept only when it is prose too (variant a is `guard.keep_headings` itself)."""
    saved, guard_module.HEADING_MAX_WORDS = guard_module.HEADING_MAX_WORDS, 20
    try:
        out = []
        for page, decision in zip(pages, keeps, strict=True):
            keep = np.asarray(decision, dtype=bool)
            rows = page.features
            prose = is_prose(
                np.expm1(rows[:, COLUMNS["log_words"]]), np.expm1(rows[:, COLUMNS["log_chars"]]),
                rows[:, COLUMNS["link_density"]], rows[:, COLUMNS["ratio_non_ascii"]],
            )  # fmt: skip
            before = guard_module.keep_headings((keep & prose).tolist(), page.blocks, rows)
            out.append(keep | np.asarray(before, dtype=bool))
        return out
    finally:
        guard_module.HEADING_MAX_WORDS = saved


def headings(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 27: the shipped rules, then a dropped heading before a kept block kept."""
    bounded_limits(
        peer_outputs, candidate, threshold, "a dropped heading is kept before",
        {"never": {"HEADING_MAX_WORDS": None}, "(a) a kept block": {"HEADING_MAX_WORDS": 20},
         "(b) kept prose": ({"HEADING_MAX_WORDS": None}, headings_before_prose)},
    )  # fmt: skip


def repeats(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 39: the shipped rules, then a kept block repeating one before it dropped."""
    bounded_limits(
        peer_outputs, candidate, threshold, "a kept repeat of at least N words is dropped",
        {"never": {"REPEAT_MIN_WORDS": None}}
        | {f"N = {n}": {"REPEAT_MIN_WORDS": n} for n in (3, 5, 10)},
    )  # fmt: skip


def calls_to_action(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 45: the shipped rules, then a kept call to action of at most N words dropped."""
    bounded_limits(
        peer_outputs, candidate, threshold, "a kept call to action of at most N words dropped",
        {"never": {"CALL_TO_ACTION_MAX_WORDS": None}}
        | {f"N = {n}": {"CALL_TO_ACTION_MAX_WORDS": n} for n in (6, 12)},
    )  # fmt: skip


def interface_lines(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 46: rule 45 with a shop's and a thread's interface lines too."""
    bounded_limits(
        peer_outputs, candidate, threshold, "calls to action dropped",
        {"rule 45 (shipped)": {"INTERFACE_LINES": False},
         "and interface lines": {"INTERFACE_LINES": True}},
    )  # fmt: skip


def outside_main_dropped(pages: list, keeps: list, at_least: float) -> list:
    """Rule 40: on pages of article probability ``at_least`` or more keeping 200 words of prose
    in the main element, the decision without its blocks outside that element."""
    article = page_type_probabilities(pages)[:, PAGE_TYPES.index("article")]
    out = []
    for page, decision, p in zip(pages, keeps, article, strict=True):
        keep = np.asarray(decision, dtype=bool)
        main_in = page.features[:, MAIN_IN_COLUMN] > 0 if len(keep) else keep
        if p >= at_least and main_in.any():
            words = guard_module._words(page.features)
            _, prose = guard_module.main_prose(keep.tolist(), page.features, words)
            if float(words[prose & main_in].sum()) >= 200:
                keep = keep & main_in
        out.append(keep)
    return out


def outside_main(peer_outputs: Path, candidate: str = SHIPPED, threshold: float = -1.0) -> None:
    """Rule 40: the shipped rules, then on a likely article the blocks outside the main element
    dropped."""
    bounded_limits(
        peer_outputs, candidate, threshold, "outside the main element dropped, article at least",
        {"never": {}} | {
            f"P {p:g}": functools.partial(outside_main_dropped, at_least=p) for p in (0.5, 0.8)
        },
    )  # fmt: skip


COMMENT_LIMITS = (50, 100, 200)  # rule 29: words of prose outside comments, every page


def by_j_settings(
    peer_outputs: Path,
    what: str,
    variants: dict[str, dict],
    candidate: str = SHIPPED,
    threshold: float = -1.0,
) -> None:
    """Rules 29 to 31: the shipped rules with each variant's `guard` settings (the first is the
    one to beat), on the candidate's decisions with each set held out and in the site folds,
    by J (`choose_by_j`)."""
    pages, decisions = held_out_decisions(candidate, threshold=threshold)
    types = page_types_out_of_fold(pages)
    saved = {n: getattr(guard_module, n) for settings in variants.values() for n in settings}
    _j_header(what)
    results = []
    try:
        for name, settings in variants.items():
            for setting, value in saved.items():  # each variant from the shipped settings
                setattr(guard_module, setting, settings.get(setting, value))
            chosen = {b: shipped_rules(pages, keeps, types) for b, keeps in decisions.items()}
            results.append(j_result(pages, chosen, peer_outputs, name))
    finally:
        for setting, value in saved.items():
            setattr(guard_module, setting, value)
    choose_by_j(results, what)


def comment_limit(peer_outputs: Path) -> None:
    """Rule 29: each comment limit (`guard.drop_comments`'s, articles the same, rule 30 off);
    the shipped limit first."""
    limits = (guard_module.COMMENTS_BESIDE_PROSE_WORDS, *COMMENT_LIMITS)
    variants = {
        f"{w}": {"COMMENTS_BESIDE_PROSE_WORDS": w, "COMMENTS_BESIDE_ARTICLE_WORDS": w,
                 "COMMENTS_UNLIKELY_FORUM_WORDS": None}
        for w in limits
    }  # fmt: skip
    by_j_settings(peer_outputs, "words of prose outside comments", variants)


FORUM_BELOW = (0.1, 0.2, 0.35)  # rule 30: the forum probability under which a limit applies


def forum_limit(peer_outputs: Path) -> None:
    """Rule 30: rule 29's limits on pages unlikely to be forums
    (`guard.COMMENTS_UNLIKELY_FORUM_WORDS` under `guard.COMMENTS_FORUM_BELOW`); without such a
    limit first."""
    variants = {"none (400)": {"COMMENTS_UNLIKELY_FORUM_WORDS": None}} | {
        f"{w} words, under {p:g}": {"COMMENTS_UNLIKELY_FORUM_WORDS": w, "COMMENTS_FORUM_BELOW": p}
        for w in COMMENT_LIMITS for p in FORUM_BELOW
    }  # fmt: skip
    by_j_settings(peer_outputs, "limit, on pages of forum probability under", variants)


# Rule 31: (S, P) of the second trigger on likely forums: the decision keeping less than S of
# the main element's prose, on pages of forum probability P or more
FORUM_TRIGGER = tuple((s, p) for s in (0.35, 0.5) for p in (0.5, 0.8))


def forum_trigger(peer_outputs: Path) -> None:
    """Rule 31: the guard's second trigger keeping every block of the main element on likely
    forums (`guard.MAIN_MIN_FORUM_PROBABILITY`); none first."""
    every = {"MAIN_KEEP": "all", "MAIN_KEPT_FROM": "main", "MAIN_ALL_BELOW_WORDS": None,
             "MAIN_MAX_KEPT_WORDS": None}  # fmt: skip
    variants = {"none": {**every, "MAIN_MIN_WORDS": None, "MAIN_MIN_FORUM_PROBABILITY": None}} | {
        f"S {s:g}, P {p:g}": {**every, "MAIN_MIN_WORDS": 100, "MAIN_MIN_KEPT_SHARE": s,
                              "MAIN_MIN_FORUM_PROBABILITY": p}
        for s, p in FORUM_TRIGGER
    }  # fmt: skip
    by_j_settings(peer_outputs, "second trigger on likely forums (S, P)", variants)


# Rule 32: the types a page declares, grouped as the page types (schema.org names), and the
# ``og:type`` values read; a research reading of the HTML, not the pipeline's
DECLARED_GROUPS = {
    "article": "Article NewsArticle BlogPosting Blog LiveBlogPosting ReportageNewsArticle "
               "OpinionNewsArticle AnalysisNewsArticle BackgroundNewsArticle ScholarlyArticle "
               "Report",
    "forum": "DiscussionForumPosting QAPage Question Answer SocialMediaPosting",
    "product": "Product ProductGroup Offer AggregateOffer IndividualProduct ProductModel",
    "collection": "ItemList CollectionPage SearchResultsPage OfferCatalog",
    "documentation": "TechArticle APIReference SoftwareSourceCode HowTo",
    "service": "Service LocalBusiness FAQPage ContactPage AboutPage SoftwareApplication "
               "WebApplication ProfessionalService",
}  # fmt: skip
_DECLARED_GROUP = {
    name.lower(): k for k, names in enumerate(DECLARED_GROUPS.values()) for name in names.split()
}
DECLARED_OG_TYPES = ("article", "product", "website")
_JSON_LD = re.compile(rb"<script[^>]*application/ld\+json[^>]*>(.*?)</script", re.S | re.I)
_JSON_LD_TYPE = re.compile(rb'"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")')
_ITEMTYPE = re.compile(rb"itemtype\s*=\s*[\"']?\s*https?://schema\.org/([A-Za-z]+)", re.I)
_META = re.compile(rb"<meta\b[^>]*>", re.I)
_OG_TYPE = re.compile(rb"""property\s*=\s*["']?og:type""", re.I)
_CONTENT = re.compile(rb"""content\s*=\s*["']([^"']*)""", re.I)


def declared_type_flags(html: bytes) -> list[float]:
    """Rule 32's columns of a page: per group of `DECLARED_GROUPS` whether the page declares
    one of its types (JSON-LD ``@type``, microdata ``itemtype``), then per value of
    `DECLARED_OG_TYPES` whether its ``og:type`` is it (``product.item`` counts as
    ``product``)."""
    names = set()
    for block in _JSON_LD.findall(html):
        for value in _JSON_LD_TYPE.findall(block):
            names.update(name.lower() for name in re.findall(rb"[A-Za-z]+", value))
    names.update(name.lower() for name in _ITEMTYPE.findall(html))
    out = [0.0] * (len(DECLARED_GROUPS) + len(DECLARED_OG_TYPES))
    for name in names:
        group = _DECLARED_GROUP.get(name.decode())
        if group is not None:
            out[group] = 1.0
    for meta in _META.findall(html):
        content = _CONTENT.search(meta) if _OG_TYPE.search(meta) else None
        if content is not None:
            value = content.group(1).decode("latin-1").strip().lower().split(".")[0]
            if value in DECLARED_OG_TYPES:
                out[len(DECLARED_GROUPS) + DECLARED_OG_TYPES.index(value)] = 1.0
    return out


def declared_types(peer_outputs: Path) -> None:
    """Rule 32: the page-type model with the types pages declare (`declared_type_flags`):
    its accuracy out of fold (three seeds) with and without them, then rules 30 and 31 on its
    probabilities."""
    global page_type_columns
    pages = load_pages()
    files = {
        (name, html.stem): html
        for name, (directory, split) in SETS.items()
        for html, _ in page_files(directory, split=split)
    }
    flags = np.array([declared_type_flags(files[p.source, p.name].read_bytes()) for p in pages])
    for name in SETS:
        share = flags[[p.source == name for p in pages]].any(axis=1).mean()
        print(f"{name}: {share:.0%} of the pages declare a type")
    checks = read_checks(SETS["modern2026"][0] / "checks.json")
    modern = [i for i, p in enumerate(pages) if p.source == "modern2026" and p.blocks]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from page_types import ALIASES

    y = np.array([PAGE_TYPES.index(ALIASES.get(k, k))
                  for k in (checks[pages[i].name].page_type for i in modern)])  # fmt: skip
    forum = PAGE_TYPES.index("forum")
    print("\n| seed | declared types | accuracy | forum precision / recall |\n|---|---|---:|---:|")
    for seed in (1, 2, 3):
        for columns in (None, flags):
            page_type_columns = columns
            predicted = page_type_probabilities(pages, seed=seed)[modern].argmax(axis=1)
            found = int(((predicted == forum) & (y == forum)).sum())
            print(f"| {seed} | {'with' if columns is not None else 'without'} |"
                  f" {(predicted == y).mean():.3f} |"
                  f" {found / max((predicted == forum).sum(), 1):.2f} /"
                  f" {found / (y == forum).sum():.2f} |", flush=True)  # fmt: skip
    try:
        for columns in (None, flags):
            page_type_columns = columns
            print(f"\n{'with' if columns is not None else 'without'} the declared types:")
            forum_limit(peer_outputs)
            forum_trigger(peer_outputs)
    finally:
        page_type_columns = None


def shipped_rules(pages: list, keeps: list, types: list[str]) -> list:
    """The decisions through the shipped rules: 11, 12 and 30 (`drop_comments`), then the
    guard, then rule 26 (`joined`), then rule 27 (`guard.keep_headings`, off as shipped), then
    rule 39 (`guard.drop_repeats`, off as shipped), then rule 45
    (`guard.drop_calls_to_action`)."""
    prose, article = (guard_module.COMMENTS_BESIDE_PROSE_WORDS,
                      guard_module.COMMENTS_BESIDE_ARTICLE_WORDS)  # fmt: skip
    forum = page_type_probabilities(pages)[:, PAGE_TYPES.index("forum")]
    dropped = drop_comments(pages, keeps, prose, article=article, types=types, forum=forum)
    words, share = guard_module.MIN_RUN_WORDS, guard_module.MIN_KEPT_SHARE
    chosen = joined(pages, guarded(pages, dropped, words, share, forum=forum))
    return [
        np.asarray(
            guard_module.drop_calls_to_action(
                guard_module.drop_repeats(
                    guard_module.keep_headings(list(keep), page.blocks, page.features),
                    page.blocks,
                ),
                page.blocks,
                page.features,
            )
        )
        for page, keep in zip(pages, chosen, strict=True)
    ]


def joined(pages: list, keeps: list) -> list:
    """The decisions through `guard.join_corpus` (rule 26, at `guard.CORPUS_BELOW_WORDS`),
    CleanEval dev's pages, which the corpus labeller learnt, left as they are."""
    if guard_module.CORPUS_BELOW_WORDS is None:
        return keeps
    corpus = load_labeller("corpus")
    out = []
    for page, decision in zip(pages, keeps, strict=True):
        keep = list(decision)
        if page.source != "cleaneval-dev":
            main_in = page.features[:, MAIN_IN_COLUMN] > 0
            keep = guard_module.join_corpus(keep, page.blocks, page.features, main_in, corpus)[0]
        out.append(np.asarray(keep, dtype=bool))
    return out


def j_result(pages: list, chosen: dict[bool, list], peer_outputs: Path, name: str) -> tuple:
    """A variant's row (`bounded_result`) and its J = (the 2026 pages' site-fold F1 + 5 x the
    held-out mean) / 6 (rule 16)."""
    _, lost, mean, _, _, site_per = bounded_result(pages, chosen, peer_outputs, name, name)
    modern = site_per["modern2026"]
    return name, lost, mean, modern, (modern + 5 * mean) / 6, site_per


def choose_by_j(results: list, what: str) -> None:
    """Rules 16 and 17: among the variants losing no more pages with a set held out than the
    shipped one (the first), the highest J, if it beats the shipped J by more than 0.002."""
    print(f"\n| {what} | site folds: " + " | ".join(SETS) + " | lost, held out | J |")
    print("|---|" + "---:|" * (len(SETS) + 2))
    for name, lost, _, _, j, site_per in results:
        print(row(name, site_per, f"{lost} | {j:.4f}"))
    shipped = results[0]
    passing = [r for r in results[1:] if r[1] <= shipped[1] and r[4] > shipped[4] + 0.002]
    chosen = max(passing, key=lambda r: r[4]) if passing else shipped
    print(f"\nchosen: {chosen[0]} (J {chosen[4]:.4f} against the shipped {shipped[4]:.4f})")


def _j_header(what: str) -> None:
    header = f"| {what} | " + " | ".join(SETS)
    header += " | held-out mean | lost (per set) | site-fold mean, lost |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 3), flush=True)


def by_j(peer_outputs: Path, candidates: dict[str, str], what: str) -> None:
    """Rules 16, 19, 20, 21 and 28: each candidate labeller (the shipped one first), its decisions
    with each set held out and in the site folds through the shipped rules, by J."""
    pages = load_pages()
    types = page_types_out_of_fold(pages)
    _j_header(what)
    results = []
    for name, candidate in candidates.items():
        _, decisions = held_out_decisions(candidate, pages)
        chosen = {b: shipped_rules(pages, keeps, types) for b, keeps in decisions.items()}
        results.append(j_result(pages, chosen, peer_outputs, name))
    choose_by_j(results, what)


THRESHOLDS = np.arange(-2.0, 1.01, 0.25)  # rule 17


def threshold(peer_outputs: Path, candidate: str) -> None:
    """Rule 17: each threshold (`THRESHOLDS`) on the candidate's scores with each set held out
    and in the site folds, through the shipped rules, by J; the site folds' choice first."""
    pages = load_pages()
    types = page_types_out_of_fold(pages)
    scores = {
        by_set: cached_out_of_fold(pages, candidate, by_set=by_set) for by_set in (True, False)
    }
    shipped, _ = choose_threshold(pages, scores[False], per_source=True)
    _j_header("threshold")
    results = []
    for t in sorted(THRESHOLDS, key=lambda t: (abs(t - shipped) > 1e-9, t)):
        chosen = {b: shipped_rules(pages, [x > t for x in s], types) for b, s in scores.items()}
        results.append(j_result(pages, chosen, peer_outputs, f"{t:g}"))
    choose_by_j(results, "threshold")


def choose_bounded(results: list) -> None:
    """Rule 9: among the base and the variants whose F1 on each set, held out and in the site
    folds, is at most 0.002 below the base's, the fewest pages lost with a set held out, ties
    broken by the held-out mean."""
    *_, base_held, base_site = results[0]
    print("\n| second trigger | site folds: " + " | ".join(SETS) + " | sets below the base |")
    print("|---|" + "---:|" * (len(SETS) + 1))
    passing = []
    for r in results:
        below = [
            s for s in SETS if base_held[s] - r[4][s] > 0.002 or base_site[s] - r[5][s] > 0.002
        ]
        print(row(", ".join(map(str, r[0])), r[5], ", ".join(below) or "none"))
        if not below:
            passing.append(r)
    main, lost, mean, site_mean, *_ = min(passing, key=lambda r: (r[1], -r[2]))
    print(
        f"\npassing: {len(passing)} of {len(results)}; chosen: {main} ({lost} pages lost; "
        f"held-out mean {mean:.4f}, site folds {site_mean:.4f})"
    )


def report_ablation(pages: list, scores: list, name: str) -> None:
    threshold, _ = choose_threshold(pages, scores, per_source=True)
    keeps = [s > threshold for s in scores]
    snippet, _ = modern_checks(pages, keeps)
    print(row(name, per_set(pages, keeps), f"{threshold:g}, {snippet:.4f}"), flush=True)


def folds(out: Path, candidate: str) -> None:
    """Write the five fold labellers of ``candidate`` (each trained without one fold's sites)
    and which fold each 2026 page is in, for `bench/quality.py --out-of-fold`
    (``bench/page_types.py --folds`` writes the fold page-type models beside them)."""
    from stream_cleaner.labeller import labeller_path
    from stream_cleaner.training import _spec

    pages = load_pages()
    chosen = {**CANDIDATES, **EXPLORED}[candidate]
    params, trees = chosen["params"], chosen["trees"]
    set_page_weights(pages, chosen.get("weights", "blocks"))
    shipped = json.loads(labeller_path("auto").read_text())
    fold_of = page_folds(pages, FOLDS, by_site=True)
    first = [p.features for p in pages]
    scores = cross_validate(pages, folds=FOLDS, num_trees=trees, params=params, by_site=True)
    add_score_context(pages, scores)
    stacked = [p.features for p in pages]
    out.mkdir(parents=True, exist_ok=True)
    for k in range(FOLDS):
        train = [i for i, f in enumerate(fold_of) if f != k]
        for i in train:
            pages[i].features = stacked[i]
        stage2 = fit_trees([pages[i] for i in train], num_trees=trees, params=params)
        for i in train:
            pages[i].features = first[i]
        booster = fit_trees([pages[i] for i in train], num_trees=trees, params=params)
        spec = _spec(booster, threshold=shipped["threshold"], mode="auto",
                     max_sentence_perplexity=shipped.get("max_sentence_perplexity"),
                     unscored_log_ppl=shipped.get("unscored_log_ppl"))  # fmt: skip
        spec["stage2"] = export_trees(stage2)
        (out / f"fold-{k}.json").write_text(json.dumps(spec, separators=(",", ":")))
        print(f"fold {k}: {len(train)} training pages", file=sys.stderr, flush=True)
    for page, features in zip(pages, first, strict=True):
        page.features = features
    assignment = {
        p.name: f for p, f in zip(pages, fold_of, strict=True) if p.source == "modern2026"
    }
    (out / "folds.json").write_text(
        json.dumps({"pages": assignment, "params": {**TRAIN_PARAMS, **params}}, indent=1)
    )


def without_model_rows(page, log_ppl: float) -> tuple[np.ndarray, np.ndarray]:
    """A training page's first-stage rows and main element as they are for a page in a
    language without a model: every sentence at the neutral perplexity (`unscored_score`),
    the rows built as for training (`add_class_features`, `add_structure_features`)."""
    log10_probs = [unscored_score(n, log_ppl)[0] for n in page.n_tokens]
    n_oov = [0] * len(page.n_tokens)
    copy = dataclasses.replace(page, log10_probs=log10_probs, n_oov=n_oov, features=block_features(
        page.blocks, page.sentences, page.block_of,
        log10_probs=log10_probs, n_tokens=page.n_tokens, n_oov=n_oov,
    ))  # fmt: skip
    add_class_features([copy])
    add_structure_features([copy])
    return copy.features, copy.main_in


def two_views(
    pages: list, views: dict, train_on: tuple[str, ...], params: dict, trees: int
) -> dict:
    """Out-of-fold scores of the stacked labeller for every page in each of the ``views``
    (name -> each page's first-stage rows and main element), the fold labellers trained on
    the pages in the views ``train_on`` (each page once per view, in its site's fold)."""
    fold_of = page_folds(pages, FOLDS, by_site=True)

    def stage(rows: dict) -> dict:
        out = {view: [np.zeros(0)] * len(pages) for view in views}
        for k in range(FOLDS):
            train = [
                dataclasses.replace(pages[i], features=rows[view][i])
                for view in train_on for i in range(len(pages)) if fold_of[i] != k
            ]  # fmt: skip
            ensemble = TreeEnsemble(export_trees(fit_trees(train, num_trees=trees, params=params)))
            for view in views:
                for i in (i for i in range(len(pages)) if fold_of[i] == k):
                    if len(rows[view][i]):
                        out[view][i] = ensemble.raw_scores(rows[view][i])
        return out

    first = stage({view: [r for r, _ in views[view]] for view in views})
    second = {
        view: [
            np.hstack((r, score_context(p.blocks, first[view][i],
                                        np.expm1(r[:, COLUMNS["log_chars"]]), main_in)))
            for i, (p, (r, main_in)) in enumerate(zip(pages, views[view], strict=True))
        ]
        for view in views
    }  # fmt: skip
    return stage(second)


def without_model(candidate: str) -> None:
    """Rule 4 (reported): the auto labeller on pages in a language without a model, and two
    labellers trained for them, out of fold on the training pages scored as if no model
    existed (`without_model_rows`)."""
    pages = load_pages()
    log_ppl = json.loads(labeller_path("auto").read_text())["unscored_log_ppl"]
    views = {
        "with": [(p.features, p.main_in) for p in pages],
        "without": [without_model_rows(p, log_ppl) for p in pages],
    }
    params, trees = CANDIDATES[candidate]["params"], CANDIDATES[candidate]["trees"]
    header = "| labeller, pages scored | " + " | ".join(SETS) + " | mean | threshold, snippet F1 |"
    print(header + "\n|---|" + "---:|" * (len(SETS) + 2), flush=True)
    for name, train_on in (
        ("trained with the model (shipped)", ("with",)),
        ("trained without (a twin)", ("without",)),
        ("trained on both (each page twice)", ("with", "without")),
    ):
        scores = two_views(pages, views, train_on, params, trees)
        for view in views:
            report_ablation(pages, scores[view], f"{name}, {view} the model")


# command -> (the candidates, the table's first header), for `by_j`
BY_J = {
    "weights": (WEIGHTS, "weights"),
    "trees": (TREE_SHAPES, "trees"),
    "types": (TYPE_INPUT, "page type"),
    "families": (FAMILIES, "trained without"),
    "labels": (CONTENT_SHARES, "content share"),
    "peer-column": (PEER_COLUMN, "labeller"),
    "randomized": (RANDOMIZED, "trees"),
    "lm-ablation": (LM_ABLATION, "labeller"),
}
# command -> its rule on the shipped labeller's decisions, given the peer outputs
SHIPPED_LABELLER = {
    "forum-trigger": forum_trigger,
    "declared-types": declared_types,
    "kept-prose": kept_prose,
    "main-share": main_share,
    "headings": headings,
    "repeats": repeats,
    "outside-main": outside_main,
    "calls-to-action": calls_to_action,
    "interface-lines": interface_lines,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "command",
        choices=(
            "select",
            "guard",
            "folds",
            "without-model",
            "across-sets",
            "main-trigger",
            "comments",
            "marks",
            "threshold",
            "corpus-join",
            "comment-limit",
            *BY_J,
            *SHIPPED_LABELLER,
        ),
    )
    parser.add_argument(
        "--candidate", choices=(*CANDIDATES, *EXPLORED),
        help=f"the labeller (default: {SHIPPED} for folds and threshold; stacked, as the "
        "rules before 16 were measured, for the others)",
    )  # fmt: skip
    parser.add_argument(
        "--what", choices=("run", "main"), default="main",
        help="guard: what it keeps when it steps in (the run's prose blocks, or also the main "
        "element's blocks)",
    )  # fmt: skip
    parser.add_argument(
        "--outside", action="append", choices=tuple(GUARD_OUTSIDE),
        help="guard: what no run of prose is taken from (repeat; default: every variant)",
    )  # fmt: skip
    parser.add_argument(
        "--only", action="store_true", help="across-sets: only --candidate (default: each)"
    )
    parser.add_argument(
        "--rule", choices=(*MAIN_TRIGGER_GRID, "11", "12", "14", "15", "25", "26", "29", "30"),
        default="8",
        help="main-trigger: rule 6 (with rule 7's variants), 8, 9 or 10; comments: 11 or 12; "
        "marks: 14 or 15; corpus-join: 25 or 26; comment-limit: 29 or 30",
    )  # fmt: skip
    parser.add_argument(
        "--threshold", type=float,
        help="main-trigger, comments, marks: the decisions' threshold (default: the site folds' "
        "choice; the shipped file's, to check a rule on the shipped decisions)",
    )  # fmt: skip
    parser.add_argument("--out", default=str(CACHE / "folds"))
    parser.add_argument(
        "--peer-outputs",
        type=Path,
        default=PEER_OUTPUTS,
        help="bench/quality.py --save-outputs's outputs folder, with trafilatura's texts",
    )
    args = parser.parse_args()
    if args.candidate is None:
        args.candidate = SHIPPED if args.command in ("folds", "threshold") else "stacked"
    if args.command in BY_J:  # the candidate labellers of rules 16, 19-21, 28 and 41-43
        by_j(args.peer_outputs, *BY_J[args.command])
    elif args.command in SHIPPED_LABELLER:  # the rules on the shipped labeller's decisions
        SHIPPED_LABELLER[args.command](args.peer_outputs)
    elif args.command == "select":
        select()
    elif args.command == "guard":
        choose_guard(args.peer_outputs, args.candidate, args.what, tuple(args.outside or ()))
    elif args.command == "without-model":
        without_model(args.candidate)
    elif args.command == "across-sets":
        across_sets(args.peer_outputs, (args.candidate,) if args.only else ())
    elif args.command == "main-trigger":
        main_trigger(args.peer_outputs, args.candidate, args.rule, args.threshold)
    elif args.command == "comments":
        rule = "12" if args.rule == "12" else "11"
        comments(args.peer_outputs, args.candidate, rule, args.threshold)
    elif args.command == "marks":
        rule = "15" if args.rule == "15" else "14"
        marks(args.peer_outputs, args.candidate, rule, args.threshold)
    elif args.command == "comment-limit":
        (forum_limit if args.rule == "30" else comment_limit)(args.peer_outputs)
    elif args.command == "threshold":
        threshold(args.peer_outputs, args.candidate)
    elif args.command == "corpus-join":
        corpus_join(args.peer_outputs, rule="26" if args.rule == "26" else "25")
    else:
        folds(Path(args.out), args.candidate)


if __name__ == "__main__":
    main()

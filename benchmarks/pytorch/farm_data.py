"""The farm language (docs/farm_language.md) in plain Python, for the
PyTorch reference benchmark.

It follows the specification exactly -- same vocabulary in the same id
order, same grammar, same corpus sizes -- but draws its random choices from
Python's `random` module, so the sentences are not the ones the C++
generator makes. Only the distribution matters for a throughput or
perplexity comparison, and that is identical.

A sentence is a list of token ids:

    <s> the SUBJ (PREP the NOUN){k} VERB [the NOUN | MASS] [ADV] </s>
"""

import math
import random

import torch

# ---------------------------------------------------------------- vocabulary
# Ids 0..67 in exactly the order of docs/farm_language.md.
_ANIMALS = ["dog", "cat", "cow", "pig", "horse", "goat", "hen", "duck", "fox",
            "rabbit", "farmer", "donkey"]
_PLURALS = ["dogs", "cats", "cows", "pigs", "horses", "goats", "hens", "ducks",
            "foxes", "rabbits", "farmers", "donkeys"]
_PREPS = ["near", "behind", "beside", "with", "under", "by"]
_VERBS_SG = ["runs", "eats", "sleeps", "sees", "likes", "chases", "jumps",
             "walks", "follows", "watches", "pushes", "finds"]
_VERBS_PL = ["run", "eat", "sleep", "see", "like", "chase", "jump", "walk",
             "follow", "watch", "push", "find"]
_MASS = ["hay", "grass", "corn", "water", "mud"]
_ADVS = ["today", "again", "slowly", "quickly", "loudly"]

VOCAB = (["<pad>", "<s>", "</s>", "the"]
         + [w for pair in zip(_ANIMALS, _PLURALS) for w in pair]     # 4-27
         + _PREPS                                                    # 28-33
         + [w for pair in zip(_VERBS_SG, _VERBS_PL) for w in pair]   # 34-57
         + _MASS                                                     # 58-62
         + _ADVS)                                                    # 63-67
assert len(VOCAB) == 68

PAD, BOS, EOS, THE = 0, 1, 2, 3
NOUN0, PREP0, VERB0, MASS0, ADV0 = 4, 28, 34, 58, 63
N_NOUNS, N_PREPS, N_LEMMAS, N_MASS, N_ADVS = 24, 6, 12, 5, 5
IGNORE_INDEX = -100          # F.cross_entropy's default ignore_index
MAX_K = 3                    # training corpora: k uniform over 0..3


def decode(ids):
    """Token ids -> readable text (for debugging)."""
    return " ".join(VOCAB[i] for i in ids)


# ------------------------------------------------------------------ grammar
def sentence(rng, k):
    """One sentence with k prepositional phrases (attractors)."""
    subj = NOUN0 + rng.randrange(N_NOUNS)      # singular/plural alternate,
    plural = (subj - NOUN0) % 2                # so the parity is the number
    s = [BOS, THE, subj]
    for _ in range(k):                         # PP := PREP the NOUN
        s += [PREP0 + rng.randrange(N_PREPS), THE, NOUN0 + rng.randrange(N_NOUNS)]
    s.append(VERB0 + 2 * rng.randrange(N_LEMMAS) + plural)   # agrees with SUBJ
    u = rng.random()                           # OBJ: 1/2 noun, 1/4 mass, 1/4 none
    if u < 0.5:
        s += [THE, NOUN0 + rng.randrange(N_NOUNS)]
    elif u < 0.75:
        s.append(MASS0 + rng.randrange(N_MASS))
    if rng.random() < 0.5:                     # ADV with probability 1/2
        s.append(ADV0 + rng.randrange(N_ADVS))
    s.append(EOS)
    return s


def corpus(rng, n):
    """n sentences, k uniform over 0..MAX_K."""
    return [sentence(rng, rng.randrange(MAX_K + 1)) for _ in range(n)]


def make_corpora(seed=0):
    """train / valid / test (20,000 / 2,000 / 2,000 sentences), all from one
    seeded generator, in that order."""
    rng = random.Random(seed)
    return {"train": corpus(rng, 20_000), "valid": corpus(rng, 2_000),
            "test": corpus(rng, 2_000)}


def true_log_prob(s):
    """log p(s) under the grammar itself. The parse is unique (every choice
    leaves a different token), so p(s) is the product of the choices' odds;
    the best possible model reaches exp(-sum log p / predicted tokens)."""
    i, lp = 3, math.log(1 / (MAX_K + 1)) + math.log(1 / N_NOUNS)   # k, SUBJ
    while PREP0 <= s[i] < PREP0 + N_PREPS:     # each PP: PREP and NOUN
        lp += math.log(1 / N_PREPS) + math.log(1 / N_NOUNS)
        i += 3
    lp += math.log(1 / N_LEMMAS)               # VERB (its number is forced)
    i += 1
    if s[i] == THE:                            # OBJ
        lp += math.log(0.5 / N_NOUNS)
        i += 2
    elif MASS0 <= s[i] < MASS0 + N_MASS:
        lp += math.log(0.25 / N_MASS)
        i += 1
    else:
        lp += math.log(0.25)
    if ADV0 <= s[i] < ADV0 + N_ADVS:           # ADV
        lp += math.log(0.5 / N_ADVS)
    else:
        lp += math.log(0.5)
    return lp


def true_perplexity(sentences):
    """The true distribution's perplexity on these sentences (the floor)."""
    logp = sum(true_log_prob(s) for s in sentences)
    tokens = sum(len(s) - 1 for s in sentences)   # every token after <s>
    return math.exp(-logp / tokens)


# ----------------------------------------------------------------- batching
def make_lm_batches(sentences, batch_size=32, rng=None):
    """Language-model batches: a list of (inputs, targets, n_tokens).

    Each batch is right-padded with <pad> to its own longest sentence. A
    sentence of length L gives L-1 pairs: inputs[t] = s[t], targets[t] =
    s[t+1]; targets under padding are IGNORE_INDEX so the loss skips them.
    With rng the sentences are taken in a fresh random order (one shuffle
    per call, i.e. per epoch); the last batch may be smaller.
    """
    order = list(range(len(sentences)))
    if rng is not None:
        rng.shuffle(order)
    batches = []
    for b in range(0, len(order), batch_size):
        rows = [sentences[i] for i in order[b:b + batch_size]]
        T = max(len(s) for s in rows) - 1
        inputs = torch.full((len(rows), T), PAD, dtype=torch.long)
        targets = torch.full((len(rows), T), IGNORE_INDEX, dtype=torch.long)
        for r, s in enumerate(rows):
            inputs[r, :len(s) - 1] = torch.tensor(s[:-1])
            targets[r, :len(s) - 1] = torch.tensor(s[1:])
        n_tokens = sum(len(s) - 1 for s in rows)
        batches.append((inputs, targets, n_tokens))
    return batches

"""Structured views (``State.observation_struct``) of every built-in game: plain JSON at every
decision with the player's own legal moves (``arena.testing.check_structured_views``), nothing a
counterfactual chance outcome could change unseen, and the same facts as the text view: each
game's key facts, read from the structure, are found in the text the same player gets."""

from __future__ import annotations

import json

import numpy as np
import pytest

import arena
from arena.game import State
from arena.games.cards import KuhnPoker, KuhnState
from arena.games.monopoly_deal.cards import KINDS
from arena.games.negotiation import describe
from arena.registry import get_registry
from arena.testing import ConformanceError, check_structured_views

VARIANTS = [
    "kuhn_poker(players=3)",
    "werewolf(talk=text)",
    "werewolf(text=brief,players=5)",
    "werewolf(seer_learns=role,reveal_role_on_death=true,vote_rule=runoff)",
    "trust_split(talk=true)",
    "deal_or_no_deal(talk=text)",
    "monopoly_deal(players=3)",
    "monopoly_deal(variant=paper)",
    "table_talk(messages=3)",
    "table_talk(game=leduc_poker)",
    "ipd(discount=0.9)",
    "ultimatum(rounds=3)",
    "bandit(kind=gaussian,arms=4,horizon=30)",
]


def decisions(game, seed: int, limit: int = 400):
    """(state, player) at every decision of one random game (text moves say something)."""
    rng = np.random.default_rng(seed)
    s = game.new_initial_state(seed)
    for _ in range(limit):
        if s.is_terminal():
            return
        if s.is_chance_node():
            out = s.chance_outcomes()
            s.apply_action(out[int(rng.integers(len(out)))][0])
            continue
        joint = []
        for p in range(game.spec.num_players):
            if p not in s.acting_players():
                joint.append(0)
                continue
            yield s, p
            legal = s.legal_actions(p)
            joint.append(
                "I hold a good hand." if s.decision_kind(p) == "text" else legal[int(rng.integers(len(legal)))]
            )
        if s.is_simultaneous_node():
            s.apply_actions(joint)
        else:
            s.apply_action(joint[s.current_player()])


def money(x: float) -> str:
    return f"{x:g}"


# -- what each game's text must say, read from its structure --------------------------------------
def kuhn_facts(v: dict) -> list[str]:
    out = [f"Pot: {v['pot']} chips"]
    return out + [f"You hold the {c['rank']}." for c in v["hand"]]


def leduc_facts(v: dict) -> list[str]:
    out = [f"You hold a {c['rank']} (suit {c['suit']})." for c in v["hand"]]
    out += [f"Board: {c['rank']} (suit {c['suit']})." for c in v["board"]] or ["Board: not dealt yet."]
    return out + [f"Pot: {v['pot']}.", f"Raise size: {v['raise_size']}."]


def liars_facts(v: dict) -> list[str]:
    out = [f"Your dice: {', '.join(map(str, v['dice']))}." if v["dice"] else "Your dice: not rolled yet."]
    bids = ", ".join(f"{b['quantity']}-{b['face']}" for b in v["bids"])
    return out + ([f"Bids so far: {bids}."] if bids else [])


def matrix_facts(v: dict) -> list[str]:
    p = v["player"]
    out = [f"Totals: you {money(v['totals'][p])}, other {money(v['totals'][1 - p])}."]
    if v["history"]:
        last = v["history"][-1]
        out.append(f"Last round you played {last['you']} and the other player played {last['other']}.")
    return out + [f"both {v['moves'][0]} {money(v['payoffs'][0]['payoffs'][0])}/"]


def coordination_facts(v: dict) -> list[str]:
    rows = "; ".join(f"{m}: " + " ".join(f"{x:g}" for x in row) for m, row in zip(v["moves"], v["payoffs"]))
    return [f"round {v['round']} of {v['horizon']}", f"Payoffs (your move, then the other's a b c): {rows}."]


def coin_facts(v: dict) -> list[str]:
    p = v["player"]
    return v["grid"] + [f"You are {v['you']}", f"Totals: you {money(v['totals'][p])}"]


def public_goods_facts(v: dict) -> list[str]:
    p = v["player"]
    out = [f"Your total: {money(v['totals'][p])}.", f"You hold {v['endowment']} tokens"]
    if v["last_round"]:
        out.append(f"Last round you gave {v['last_round'][f'player {p}']};")
    return out


def trust_split_facts(v: dict) -> list[str]:
    p = v["player"]
    out = [f"Totals: you {money(v['totals'][p])}, other {money(v['totals'][1 - p])}."]
    if "hand" in v:
        out.append(f"Your hand: {v['hand']}")
    if "other_hand" in v:
        out.append(f"the other's hand: {v['other_hand']}")
    for r in v["rounds"][-3:]:
        out.append(f"you claimed {r['claims']['you']}, the other claimed {r['claims']['other']}")
    return out + [f"said: {t['text']!r}" for t in v["talk"]]


def negotiation_facts(v: dict) -> list[str]:
    if "items" not in v:
        return []
    pool = [i["count"] for i in v["items"]]
    out = [f"Items: {describe(pool)}.", ", ".join(f"{i['item']} {i['your_value']}" for i in v["items"])]
    out += v["log"]
    if "standing_offer" in v:
        got = list(v["standing_offer"]["you_get"].values())
        out.append(f"Standing offer: you would get {describe(got)}, worth {v['standing_offer']['worth']} to you.")
    return out + [f"Turn {v['turn']} of {v['max_turns']}."]


def open_task_facts(v: dict) -> list[str]:
    return [f"Task {v['task']}: write a one-line plan to {v['goal']}."]


def prompt_facts(v: dict) -> list[str]:
    return [v["prompt"]] + ([f"Answer: {v['answer']}"] if v["answer"] is not None else [])


def table_talk_facts(v: dict) -> list[str]:
    p = v["player"]
    facts = FACTS[v["wrapped"]](v)
    for t in v["talk"]:
        m = t["message"]
        said = f'"{m}"' if isinstance(m, str) else f"message {m}"
        facts.append(f"{'you' if t['player'] == p else 'your opponent'}: {said}")
    return facts


def werewolf_facts(v: dict) -> list[str]:
    if "seats" not in v:
        return ["Roles are being dealt."]
    alive = ", ".join(f"player_{s['seat']}" for s in v["seats"] if s["alive"])
    return v["log"] + [f"Alive: {alive}.", f"You are player_{v['player']}, a {v['role'].capitalize()}."]


def werewolf_brief_facts(v: dict) -> list[str]:
    if "seats" not in v:
        return []
    alive = " ".join(f"p{s['seat']}" for s in v["seats"] if s["alive"])
    head = f"p{v['player']} {v['role']} day {v['day']}/{v['max_days']}" if "day" in v else f"p{v['player']} {v['role']}"
    return [f"alive {alive}", head] if v["alive"] else [head]


def monopoly_deal_facts(v: dict) -> list[str]:
    if "hand" not in v:
        return ["The cards are being dealt."]
    size = sum(c["count"] for c in v["hand"])
    out = [f"Your hand ({size}):"] + [KINDS[c["kind"]].short() for c in v["hand"]]
    for seat in v["seats"]:
        out.append(f"bank ${seat['bank']['total']}M")
        out += [f"{s['colour']} {len(s['cards'])}/{s['size']}" for s in seat["sets"]]
        if not seat["you"]:
            out.append(f"Player {seat['player']} (hand {seat['hand_size']} cards)")
    out += [f"Draw pile {v['draw_pile']} cards", f"Turn {v['turn']} (limit {v['max_turns']})"]
    out += [v["pending"]["text"]] if "pending" in v else []
    return out + ([v["ask"]] if "ask" in v else [])


def bargaining_facts(v: dict) -> list[str]:
    p = v["player"]
    out = [f"You are the {v['role']}.", f"Totals: you {money(v['totals'][p])}, other {money(v['totals'][1 - p])}."]
    if "offer" in v:
        out.append(f"The proposer offers you {v['offer']} (it keeps {v['pie'] - v['offer']}).")
    return out


def bandit_facts(v: dict) -> list[str]:
    out = [f"Pull {v['pull']} of {v['horizon']}.", f"Total reward: {v['total_reward']:.2f}."]
    out += [f"arm {s['arm']}: {s['pulls']} pulls" for s in v["stats"]]
    out += [f"mean reward {s['mean']:.2f}" for s in v["stats"] if s["mean"] is not None]
    return out + [f"arm {r['arm']} paid {r['reward']:.2f}" for r in v["recent"]]


def foraging_facts(v: dict) -> list[str]:
    me, other = v["me"], v["other"]
    out = [
        f"You (A) are at row {me['row']}, col {me['col']}, level {me['level']}",
        f"the other agent (B) at row {other['row']}, col {other['col']}, level {other['level']}",
    ]
    out += [f"Item at row {f['row']}, col {f['col']}: level {f['level']}" for f in v["food"]]
    return out + v["grid"] + [f"step {v['round']} of {v['horizon']}"]


def arithmetic_facts(v: dict) -> list[str]:
    return [f"role: {v['role']}", f"task: {v['task']}"] + (
        [f"answer: {v['answer']}"] if v["answer"] is not None else []
    )


FACTS = {
    "kuhn_poker": kuhn_facts,
    "leduc_poker": leduc_facts,
    "liars_dice": liars_facts,
    "ipd": matrix_facts,
    "stag_hunt": matrix_facts,
    "chicken": matrix_facts,
    "climbing": coordination_facts,
    "penalty": coordination_facts,
    "coin_game": coin_facts,
    "public_goods": public_goods_facts,
    "trust_split": trust_split_facts,
    "deal_or_no_deal": negotiation_facts,
    "open_task": open_task_facts,
    "cyclic_preference": prompt_facts,
    "table_talk": table_talk_facts,
    "werewolf": werewolf_facts,
    "monopoly_deal": monopoly_deal_facts,
    "monopoly_deal_intents": monopoly_deal_facts,
    "ultimatum": bargaining_facts,
    "dictator": bargaining_facts,
    "bandit": bandit_facts,
    "arithmetic": arithmetic_facts,
    "foraging": foraging_facts,
}


def test_every_built_in_game_has_a_structured_view():
    names = get_registry().names("game")
    assert set(FACTS) == set(names), "a built-in game needs a structured view and its facts here"
    for name in names:
        s = arena.load_game(name).new_initial_state(0)
        assert isinstance(s.observation_struct(0), dict), name


@pytest.mark.parametrize("name", VARIANTS)
def test_variants_have_plain_leak_free_structured_views(name):
    check_structured_views(name, games=2, walks=3)


@pytest.mark.parametrize("name", sorted(FACTS) + ["werewolf(text=brief)", "deal_or_no_deal(talk=text)"])
def test_structured_view_agrees_with_the_text(name):
    game = arena.load_game(name)
    brief = game.spec.params.get("text") == "brief"
    facts = werewolf_brief_facts if brief and game.spec.name == "werewolf" else FACTS[game.spec.name]
    if brief and game.spec.name != "werewolf":
        pytest.skip("brief text keeps only some facts")
    checked = 0
    for seed in range(2 if "monopoly_deal" in name and "intents" not in name else 6):
        for s, p in decisions(game, seed, 150 if name.startswith("monopoly_deal(") or name == "monopoly_deal" else 400):
            view, text = s.observation_struct(p), s.observation_text(p)
            assert view["player"] == p and view["your_turn"]
            missing = [f for f in facts(view) if f not in text]
            assert not missing, (missing, text)
            checked += 1
    assert checked >= 2


def test_struct_is_json_and_names_what_moves_act_on():
    """The Monopoly Deal view puts a card in hand under every move that plays it, and the
    werewolf vote on the seat voted for: what the web table clicks on."""
    md = arena.load_game("monopoly_deal")
    plays = 0
    for s, p in decisions(md, 3, 120):
        view = json.loads(json.dumps(s.observation_struct(p)))
        hand = {f"hand:{c['kind']}" for c in view.get("hand", [])}
        for move in view["legal"]:
            if move["label"].startswith(("bank ", "discard ", "play ")) and "Pass Go" not in move["label"]:
                assert set(move["on"]) & hand, move
                plays += 1
    assert plays > 10
    ww = arena.load_game("werewolf(talk=none)")
    votes = 0
    for s, p in decisions(ww, 1):
        view = s.observation_struct(p)
        for move in view["legal"]:
            if move["label"].startswith("vote player_"):
                assert move["on"] == [f"seat:{move['label'].split('_')[1]}"]
                votes += 1
    assert votes > 3


class LeakyKuhnState(KuhnState):
    def observation_struct(self, player: int):
        view = super().observation_struct(player)
        view["cards"] = self._s.history()[: self.num_players()]  # every hand: a leak
        return view


class LeakyKuhn(KuhnPoker):
    state_class = LeakyKuhnState


class PrivateKuhnState(KuhnState):
    def observation_struct(self, player: int):
        view = super().observation_struct(player)
        view["legal"] = view.get("legal", [])[:1]  # offers fewer moves than the state
        return view


class PrivateKuhn(KuhnPoker):
    state_class = PrivateKuhnState


def test_the_checks_catch_a_leak_and_a_wrong_move_list():
    with pytest.raises(ConformanceError, match="depends on a chance outcome"):
        check_structured_views(LeakyKuhn(), games=3, walks=0)
    with pytest.raises(ConformanceError, match="legal moves"):
        check_structured_views(PrivateKuhn(), games=0, walks=3)
    check_structured_views(KuhnPoker(), games=3, walks=3)


def test_a_game_without_structured_views_is_fine():
    class Plain(State):
        pass

    assert Plain().observation_struct(0) is None

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from datetime import datetime, timezone

from .. import validation
from ..errors import InvalidInput, NotFound
from ..service import MemoryService
from ..tokens import hash_token, new_token, parse_hash_prefix, parse_scopes
from .output import add_json_flag, emit

NAME = "token"
HELP = "bearer tokens for the HTTP transports: create, list, revoke, hash"
WORKER = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="token_action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a token; it is printed once, only its hash is stored")
    create.add_argument("--owner", dest="token_owner", required=True, help="whose memory the token acts for")
    create.add_argument("--scope", default="read,write", help="read, write or read,write (default)")
    create.add_argument("--label", default=None, help="a note to recognise it by")
    add_json_flag(create)
    listing = actions.add_parser("list", help="tokens in the database (hashes, owners, scopes)")
    add_json_flag(listing)
    revoke = actions.add_parser(
        "revoke", help="revoke a token by its hash (a prefix of 8 or more hex digits that names only it is enough)"
    )
    revoke.add_argument("hash_prefix")
    digest = actions.add_parser("hash", help="print the hash of a token (for [[auth.tokens]] in the config)")
    digest.add_argument("token")


async def run(service: MemoryService, args: argparse.Namespace) -> None:
    if args.token_action == "create":
        owner = validation.owner(args.token_owner, name="--owner")
        label = None if args.label is None else validation.label(args.label)
        scopes = parse_scopes(args.scope)
        token = new_token()
        digest = hash_token(token)
        await service.store.write(lambda writer: writer.insert_token(digest, owner, scopes, label))
        emit(args, {"token": token, "hash": digest, "owner": owner, "scopes": list(scopes)}, token)
        print(
            f"(owner {owner}, scopes {','.join(scopes)}; hash {digest}. "
            "Save the token now: it is not shown again. HTTP servers on this database need a token "
            "on every request from now on, running ones within seconds.)",
            file=sys.stderr,
        )
    elif args.token_action == "list":
        rows = await service.store.read(lambda reader: reader.list_tokens())
        emit(
            args,
            [asdict(row) for row in rows],
            "\n".join(
                # Rows made before the owner rule, or by hand, may hold control characters.
                f"{row.hash[:19]}  {validation.printable(row.owner):<16} {','.join(row.scopes):<10} "
                f"{datetime.fromtimestamp(row.created_at, timezone.utc):%Y-%m-%d}"
                f"{'  REVOKED' if row.revoked_at else ''}  {validation.printable(row.label or '')}".rstrip()
                for row in rows
            )
            or "no tokens",
        )
    elif args.token_action == "revoke":
        prefix = parse_hash_prefix(args.hash_prefix)
        matched = await service.store.write(lambda writer: writer.revoke_token(prefix))
        if not matched:
            raise NotFound(f"no active token has a hash starting with {prefix}; `memwal-mcp token list` shows them")
        if len(matched) > 1:
            raise InvalidInput(
                f"{len(matched)} active tokens have a hash starting with {prefix}; nothing was revoked:"
                " give more of the hash, so that it names one token"
            )
        print(f"revoked {matched[0]}")
        if (
            not service.settings.auth.tokens
            and await service.store.read(lambda reader: reader.count_active_tokens()) == 0
        ):
            print(
                "No active token is left: HTTP servers already running refuse every request until they "
                "restart; restarted without tokens, one serves only on a loopback address or with --insecure-no-auth.",
                file=sys.stderr,
            )
    else:
        print(hash_token(args.token))

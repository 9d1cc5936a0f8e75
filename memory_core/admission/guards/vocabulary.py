"""The guards' shared vocabulary: the shape of a rule (``Rule``, ``rx``, ``gap``) and the word
lists the rule tables are built from, folded (no accents, lower case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def rx(*parts: str) -> re.Pattern:
    return re.compile("".join(parts), re.IGNORECASE)


# A character inside the same sentence. A dot followed by a letter or a digit does not end
# it: the dots of "jane@example.com", "$1,200.50" or "v1.2.3" are inside one; a dot before a
# space, a quote or a bracket still ends it ("... the signal.' From now on ...").
W = r"(?:[^.!?;\n]|\.(?=\w))"
GAP = r"(?:\W+\w+){0,%d}?\W+"  # up to N words between two anchors (same text, lazy)

# Where a record's word starts a match: at its token's start, not inside a hyphenated run
# ("sku-sku-sku-..."). Begun at each word of such a run, a record's id look-ahead scanned the
# rest of the run from each, and 4,000 characters of it took half a second a content (stop
# 63's review of admission): one start a run keeps a rule linear.
RUN_START = r"(?<![#\w-])"


def gap(n: int) -> str:
    return GAP % n


# A word and what follows it up to the next word, for "up to N words" between two anchors
# where a word is anything between spaces ("e-mail", "https://x.y/z", "it's"). The rules
# wrote it ``(?:\S+\W+){lo,hi}?``, but ``\S`` holds the punctuation ``\W`` also matches, so
# a run of "trust-trust-trust-..." was split every way and one 300-character content took
# seconds (stop 60's review). Here a word is read whole, possessively (one way only), up to
# the next space; the last one may instead end inside a token at its punctuation ("x-as"),
# a few segments in, which the old shape also read. The bound keeps one start's scan short.
_WHOLE_WORD = r"\w\S{0,200}+\W+"
_WORD_PART = r"(?:\w++[^\w\s]++){1,3}?"


def words(low: int, high: int) -> str:
    """Return a pattern for ``low`` to ``high`` words (lazy) that cannot backtrack."""
    whole = rf"(?:{_WHOLE_WORD}){{{low},{high}}}?"
    if high == 0:
        return whole
    return rf"(?:{whole}|(?:{_WHOLE_WORD}){{{max(low - 1, 0)},{high - 1}}}?{_WORD_PART})"


OVERRIDE_VERBS = (
    r"(?:ignore|ignoring|disregard|forget|override|overrule|bypass|discard|abandon|neglect|"
    r"nevermind|stop following|do not follow|don'?t follow|no longer follow|"
    r"no prestes atencion (?:a|al|a las|a los)|no hagas caso (?:a|al|de)|ne pretez? pas "
    r"attention (?:a|aux|au)|achte nicht auf|nao preste atencao (?:a|as|aos|ao)|non prestare "
    r"attenzione (?:a|alle|ai|agli|al|all')|non dare retta (?:a|alle|ai|agli|al|all')|"
    r"pay no attention to|set aside|put aside|"
    # ... in the idioms of "pay no attention" (stored until stop 61's audit of admission,
    # "take no heed of" and "pay no regard to" until its review)
    r"(?:pay|give) no (?:mind|heed|regard) to|take no (?:notice|heed) of|"
    r"stop paying attention to|stop (?:applying|obeying|observing|respecting)|"
    r"not (?:applying|following|obeying|observing)|no longer (?:apply|obey|observe|respect)|"
    r"quit following|"
    # es / pt / it / fr / de
    r"ignora|ignorar|ignore[sz]?|olvida|olvidar|omite|descarta|desconsidera|desconsidere|"
    r"esquece|esqueca|esquecer|dimentica|dimenticare|trascura|oublie[rz]?|"
    r"ne tiens pas compte|ne tenez pas compte|ignoriere|ignorieren|vergiss|vergessen|"
    r"missachte|uberschreibe|"
    # ... and their other imperatives, the plural's and an instruction's infinitive: "Ignorer
    # toutes les instructions précédentes", "Ignoriert alle bisherigen Anweisungen", "Ignorem
    # ...", "Ignorate ..." (stored until stop 68's hunt for admission bypasses)
    r"ignorer|ignorad|ignoren|olvidad|olviden|ignorem|esquecam|"
    # ... those that are a third person's or a participle too ("Der Hund ignoriert alle
    # Befehle", "le regole dimenticate") only where an order starts: a clause, or after
    # "bitte", "jetzt", "per favore" (refused until stop 68's review of its admission rules)
    r"(?:(?<!\w )|(?<=\bbitte )|(?<=\bund )|(?<=\bjetzt )|(?<=\bnun )|(?<=\bdann )|"
    r"(?<=\bsofort )|(?<=\bfavore )|(?<=\bora )|(?<=\badesso ))"
    r"(?:ignorate|dimenticate|ignoriert|vergesst|missachtet)|"
    r"ne tiens plus compte|ne tenez plus compte)"
)
OVERRIDE_QUALIFIERS = (
    r"(?:all|any|every|previous|prior|earlier|above|preceding|original|initial|existing|"
    r"your|system|safety|security|other|old|current|"
    r"todas|todos|anteriores|previas|tus|sus|toutes|tous|precedentes|vos|tes|anterieures|"
    r"alle|vorherigen|bisherigen|deine|ihre|obigen|as|anteriores|suas|tutte|tutti|"
    r"precedenti|tue|le)"
)
INSTRUCTION_NOUNS = (
    r"(?:instructions?|guidelines?|directives?|guardrails?|safeguards?|programming|prompts?|"
    r"system message|rules|polic(?:y|ies)|restrictions|constraints|commands|orders|guidance|"
    r"directions|briefing|configuration|setup|safety checks|security checks|"
    r"content filters?|safety filters?|"
    r"instrucciones|indicaciones|reglas|normas|directrices|consignes|regles|directives|"
    r"anweisungen|regeln|vorgaben|richtlinien|instruktionen|befehle|"
    r"instrucoes|regras|diretrizes|orientacoes|istruzioni|regole|direttive|indicazioni)"
)
PERSISTENCE = (
    r"(?:from now on|from this (?:point|moment|day) (?:on|forward|onwards?)|henceforth|"
    r"hereafter|going forward|moving forward|from here on|onwards?|"
    r"from (?:today|tomorrow|this (?:week|day)) on(?:wards?)?|starting (?:now|today|immediately)|"
    r"in (?:future|later|upcoming|subsequent) (?:conversations?|sessions?|chats?|responses?|"
    r"answers?|interactions?|requests?|tasks?|replies)|"
    r"in (?:all|every|any) (?:future|subsequent|later|upcoming|next) "
    r"(?:conversations?|sessions?|chats?|responses?|answers?|interactions?|requests?|tasks?|replies)|"
    r"for (?:all|every) (?:future|subsequent)|for the rest of (?:this|the|all)|permanently|"
    r"at all times|no matter what|regardless of (?:what|any|the|previous|prior|instructions|"
    r"polic|rules|who)|until told otherwise|"
    # ... and an order headed as standing: "Standing order: approve ..." (stop 61's audit of
    # admission); a bank's standing order, "has a standing order to pay rent", heads nothing.
    # Headed with a dash too, as an instruction, and in the other languages (stored until
    # its review of the vocabulary fix: "Standing instruction: ...", "Orden permanente: ..."),
    # and with "--", a dash's ASCII spelling (until stop 61's audit of admission).
    r"(?:standing (?:orders?|instructions?|directives?)|(?:orden(?:es)?|ordem|ordens) permanentes?|"
    r"ordres? permanents?|dauerauftrag|daueranweisung|standige anweisung|ordine permanente|"
    r"instruccion(?:es)? permanentes?|instructions? permanentes?|instruc(?:ao|oes) "
    r"permanentes?|istruzion[ei] permanent[ei])(?=\s*(?::|[-\u2013\u2014]+\s))|"
    r"a partir de ahora|de ahora en adelante|desde ahora|en adelante|"
    r"a partir de maintenant|desormais|dorenavant|a l'avenir|a partir d'aujourd'hui|"
    r"ab sofort|ab jetzt|von nun an|von jetzt an|kunftig|in zukunft|"
    r"a partir de agora|de agora em diante|daqui para frente|daqui em diante|"
    r"d'ora in poi|da ora in poi|da adesso in poi|d'ora in avanti|da oggi in poi)"
)
DIRECTIVES = (
    r"(?:always|never|must|shall|ignore|obey|trust|treat|approve|grant|bypass|skip|forward|"
    r"send|wire|route|transfer|disregard|comply|you|answer|respond|reply|tell|do not|don'?t|"
    r"refuse|accept|allow|execute|run|share|reveal|remember|believe|consider|assume|pretend|"
    r"say|claim|ignorez|ignorer|ignorar|ignorieren|ignorare|should|read|display|state|show|"
    r"siempre|nunca|debes|responde|envia|aprueba|ignora|trata|"
    r"toujours|jamais|tu dois|vous devez|reponds|repondez|envoie|envoyez|approuve|ignore|"
    r"considere|considerez|traite|traitez|accorde|donne|"
    r"immer|niemals|nie|musst|mussen|sollst|solltest|antworte|sende|genehmige|ignoriere|"
    r"behandle|"
    r"sempre|nunca|deve|responda|envie|aprove|ignore|trate|"
    r"sempre|mai|devi|rispondi|invia|approva|ignora|tratta)"
)
ROLE_NOUNS = (
    r"(?:admin|admins|administrator|administrators|superuser|super user|super-user|root user|"
    r"root(?! beer| canal| vegetables?| cause)|sysadmin|owner|co-owner|operator|moderator|"
    r"superadmin|super admin|"
    r"developer of (?:this|the) (?:app|system|platform|assistant|bot|service)|"
    r"(?:ceo|cfo|cto|founder) of (?:this|the) company|staff member|support agent|"
    # "staff" alone, as a weak noun: "I'm staff here" (stop 60's audit of admission)
    r"staff|security team|compliance officer|"
    r"administrador|administradora|propietario|dueno|administrateur|administratrice|"
    r"proprietaire|gerant|eigentumer|inhaber|verwalter|dono|dona|proprietario|amministratore|"
    r"titolare|moderador|moderadora|moderateur|moderatrice|moderatore)"
)
# Role nouns that also name an occupation or a possession ("a dog owner", "a forklift
# operator", "a compliance officer"): an identity claim only with a reference to this system
# after them ("the owner of this workspace", "an operator here") or a scope before them ("a
# system-wide operator"), or as "the owner" alone.
WEAK_ROLE_NOUNS = re.compile(
    r"(?:owner|co-owner|operator|staff member|staff|support agent|security team|compliance officer|"
    r"propietario|dueno|proprietaire|gerant|eigentumer|inhaber|verwalter|dono|dona|"
    r"titolare)",
    re.IGNORECASE,
)
# "... of this platform", "... here", "... for every account": this system named.
THIS_SYSTEM = (
    r"(?:(?:of|for|on|at|in|over|across|de|du|des|da|do|di|del|della|von|vom|fur|bei)\W+"
    r"(?:(?:this|our|your|esta|este|cette|cet|ce|questa|questo|dieser|dieses|diesem|desta|"
    r"deste|nuestra|nuestro|notre|unsere|unserer|nossa|nosso|nostra|nostro)\W+(?:\w+\W+)?|"
    r"(?:the|la|le|el|l'|die|der|das|den|dem|o|il|lo)\W+)(?:platform|app|application|"
    r"account|workspace|system|service|tenant|org|organi[sz]ation|site|instance|assistant|"
    r"bot|chatbot|deployment|memledger|"
    r"plataforma|plateforme|plattform|piattaforma|cuenta|compte|konto|conta|conto|sistema|"
    r"systeme|aplicacion|anwendung|aplicativo|applicazione|servicio|dienst|servico|"
    r"servizio|espacio|espace|arbeitsbereich)s?\b|here\b|aqui\b|ici\b|hier\b|"
    r"(?:for|on|over|across)\W+(?:all|every|each)\W+(?:\w+\W+)?(?:accounts?|users?|"
    r"tenants?|workspaces?)\b)"
)
# Modifiers that make a role an occupation or a role in the user's own world, not ours.
OCCUPATION_BEFORE = (
    r"(?:database|db|system|systems|network|linux|unix|windows|sql|server|wiki|school|"
    r"hospital|office|cloud|it|sharepoint|salesforce|jira|github|gitlab|slack|discord|"
    r"minecraft|wordpress|community|forum|home|hobby|club|team|group|project|repo|"
    r"repository|site reliability|web|kubernetes|k8s|aws|azure|gcp|exchange|oracle|postgres|"
    r"mysql|sap|erp|crm|shopify|google workspace|workspace|channel|server's|family|household|"
    r"building|property|restaurant|shop|small business|business|company's|bakery|cafe|"
    r"their|his|her|its)"
)
# What this system holds for a user, named after a possessive: one list for every language,
# where three had drifted apart (stop 64's review of admission). Up to two words may come
# between ("admin access to their own billing account", "auf seinen eigenen
# Arbeitsbereich"); "their team's repo" is not the team's.
_THIS_SYSTEMS_HOLDINGS = (
    r"(?:(?:account|profile|login|access|subscription|membership|plan|workspace|tenant|"
    r"organi[sz]ation|org|team|cuenta|compte|conta|conto|perfil|profil|profilo)s?|data|"
    r"(?:benutzer)?kont(?:o|os|en)|mandant(?:en)?|arbeitsbereich(?:s|es|e)?)\b(?!['\u2019]s\b)"
)
_A_HOLDING_NAMED = r"\W+(?:\w+\W+){0,2}?" + _THIS_SYSTEMS_HOLDINGS
# ... or what they ask of it: "bypass the content filter for their requests", "turn off your
# moderation for their chats" (`blind6`), "para sus solicitudes".
_WHAT_THEY_ASK = (
    r"\W+(?:\w+\W+)?(?:requests?|chats?|messages?|questions?|conversations?|sessions?|"
    r"prompts?|quer(?:y|ies)|answers?|replies)\b"
)
_WHAT_THEY_ASK_ML = (
    r"\W+(?:\w+\W+)?(?:solicitudes|peticiones|mensajes|chats?|preguntas|conversaciones|"
    r"sesiones|consultas|demandes|requetes|messages|questions|conversations|anfragen|"
    r"nachrichten|fragen|gesprache|solicitacoes|mensagens|perguntas|conversas|richieste|"
    r"messaggi|domande|conversazioni)"
)
_NOT_THIS_SYSTEMS_ML = r"(?!" + _A_HOLDING_NAMED + r"|" + _WHAT_THEY_ASK_ML + r")"
OWN_WORLD_AFTER = (
    r"(?:(?:member|volunteer|contributor|seller|buyer|driver|host|reviewer|donor|player)\W+)?"
    r"(?:(?:of|on|for|at|in|over|from) (?:a|an|the family|the local|several|two|many|some)|"
    # The user's own things, "to" them too ("admin access to their own laptop", refused
    # until stop 64's audit of admission), not someone's ("admin rights to a contractor"),
    # nor, to or on it, what this system holds for them: "admin access to their account",
    # "... on their account" (stored until that audit), "... to their own workspace" (until
    # its review), where a check at their bank "for their account" is theirs, and so is a
    # setting "on their gaming account".
    r"(?:(?:of|for|at|in|over|from) |to (?!(?:their|his|her|the user's)"
    + _A_HOLDING_NAMED
    + r")|on (?!(?:their|his|her|the user's)\W+(?:own\W+)?"
    + _THIS_SYSTEMS_HOLDINGS
    + r"))(?:(?:their|his|her|the user's)(?!"
    + _WHAT_THEY_ASK
    + r")|his own|her own|their own|my own|"
    # "my" too, but not of what this system holds for the user: "disable 2FA for my account"
    r"my(?!" + _A_HOLDING_NAMED + r")))\b|by (?:profession|trade)|"
    # es, fr, de, pt, it put the qualifier after the noun: "administrador de sistemas",
    # "administrateur système", "dono de uma padaria", "Inhaber einer Bäckerei", "Zugriff
    # auf seinen Laptop".
    r"(?:de|d'|du|des|da|do|di|del|della|dello|dei|von|vom|en|dans|in|em|na|no|nel|nella|"
    r"para|pour|per|fur|bei|a|au|chez|auf)\W*(?:un|una|une|uno|um|uma|ein|eine|einer|einem|"
    r"eines|mi|mis|mon|ma|mes|mein|meine|meiner|meinem|meinen|meu|minha|mio|mia|su|sus|son|"
    r"sa|ses|sein|seine|seiner|seinem|seinen|ihr|ihre|ihrer|ihrem|ihren|seu|sua|suo|leur|"
    r"leurs)\b" + _NOT_THIS_SYSTEMS_ML + r"|"
    r"(?:einer|eines|einem)\b|"
    # ... and a possessive in German's genitive, with no preposition: "Administrator seines
    # Heimnetzwerks" (refused until stop 64's audit of admission).
    r"(?:seines|seiner|ihres|meines)\b" + _NOT_THIS_SYSTEMS_ML + r"|"
    r"(?:(?:de|di|des|du)\W+)?(?:sistemas?|sistemi|systemes?|systeme|redes?|reseaux?|reti|rete|"
    r"bases? de (?:datos|donnees|dados)|banco de dados|servidores|serveurs|ti|informatique|"
    r"informatica|escuela|ecole|escola|scuola)\b|"
    r"(?:on|at|in|for) (?:twitter|x|instagram|linkedin|github|gitlab|reddit|facebook|tiktok|"
    r"youtube|twitch|discord|slack|ebay|etsy|airbnb|uber|stack overflow|wikipedia|mastodon)\b|"
    r"(?:assistant|clerk|coordinator|secretary|worker)\b|"
    r"at work|at their|professionally|de profession|von beruf|de profissao|di professione|"
    r"de profesion|por profesion"
)
SUBJECT_REFS = (
    r"(?:i|me|my|user|the user|this user|customer|the customer|this customer|"
    r"caller|requester|sender|he|she|they|account holder|client|this account|my account|"
    r"the account|yo|je|j'|ich|eu|io|este usuario|el usuario|el cliente|este cliente|"
    r"cet utilisateur|l'utilisateur|le client|ce client|dieser benutzer|der benutzer|"
    r"dieser nutzer|der nutzer|der kunde|o usuario|este usuario|o cliente|l'utente|"
    r"questo utente|il cliente)"
)
# A pronoun with its verb "to be" in one token: "I'm", "soy", "je suis", "ich bin", "sono".
SELF_IS = r"(?:i'm|i’m|im|i am|soy|yo soy|je suis|ich bin|eu sou|sono|io sono)"
# Between a field's label and its value: a colon or "=", and the shapes a tool's output or a
# report gives a field, read alike since stop 60's audit of admission: an arrow ("role ->
# admin"), a table row's cell border ("| role | admin |"), and an element's tag ending
# before its text ("<role>admin</role>": a ">" only with a closing tag after the text, so
# "balance > 5400" stays a comparison). A bracketed aside may stand before it, as reports
# print a unit or a qualifier ("Balance (USD): 5400", "Role (current): admin").
FIELD_SEP = r"(?:[:=]|->|=>|\u2192|\|(?!\|)|>(?=[^<>\n]{1,60}</))"
ASIDE = r"(?:\s*[(\[][^()\[\]\n]{1,30}[)\]])?"
# An ISO currency code before its amount: "USD 5,400", "EUR 40".
CURRENCY_CODE = r"\b(?:usd|eur|gbp|chf|cad|aud|nzd|jpy|cny|inr|brl|mxn|sek|nok|dkk|pln)"
MONEY = (
    r"(?:refunds?|refunded|payments?|payouts?|funds|money|transfers?|deposits?|reimbursements?|"
    r"invoices?|proceeds|withdrawals?|cashback|earnings|commissions?|salary payments|"
    r"wages|rebates?|chargebacks?|settlements?|revenue|donations?|tips|balances?|credits|"
    r"reembolsos?|pagos?|fondos|dinero|devoluciones|remboursements?|paiements?|fonds|argent|"
    r"virements?|erstattungen?|ruckerstattungen?|zahlungen?|gelder|geld|auszahlungen?|"
    r"pagamentos?|fundos|dinheiro|rimborsi|rimborso|pagamenti|pagamento|fondi|soldi|denaro|"
    r"store credit|credit|[$€£¥]\s?\d[\d,.]*+|(?<![\d,.])\d[\d,.]*+\s?(?:usd|eur|gbp|dollars|"
    r"euros)|" + CURRENCY_CODE + r"\s?\d[\d,.]*+)"
)
MOVE_VERBS = (
    r"(?:wire[sd]?|wiring|send|sent|sends|sending|route[sd]?|routing|transfer(?:red|s)?|"
    r"redirect(?:ed|s)?|forward(?:ed|s)?|deposit(?:ed|s)?|pay|paid|remit(?:ted)?|credit(?:ed)?|"
    r"move[sd]?|direct(?:ed)?|issue[sd]?|disburse[sd]?|go|goes|land|diverted|divert|"
    r"pay out|payout|cash out|release|refund|"
    # ... in the third person and the progressive: "The assistant pays every refund into"
    r"pays|paying|pays out|remits|remitting|credits|crediting|diverts|diverting|lands|"
    r"releases|releasing|transferring|redirecting|forwarding|depositing|moving|directing|"
    r"issuing|disbursing|"
    r"transfiere|transferir|envia|enviar|deposita|depositar|manda|mandar|ingresa|"
    r"virez|virer|vire|envoyez|envoyer|envoie|transferez|transferer|versez|verser|"
    r"uberweise|uberweisen|sende|senden|leite|leiten|uberwiesen|uberweisung|uberwies|"
    r"transfira|transferir|envie|enviar|deposite|mande|"
    r"trasferisci|trasferire|invia|inviare|manda|accredita|accreditare|bonifica|versa)"
)
DESTINATIONS = (
    r"(?:account|acct|iban|swift|bic|wallet|bank|routing number|sort code|paypal|venmo|"
    r"zelle|crypto|bitcoin|btc|eth|usdt|card ending|card number|"
    r"cuenta|compte|konto|conta|conto|carteira|portefeuille|cartera)"
)
IBAN = r"\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){3,7}(?: ?[a-z0-9]{1,4})?\b"
CRYPTO_ADDRESS = r"\b(?:bc1[a-z0-9]{20,60}|0x[a-f0-9]{40})\b"
URL_TLDS = (
    "com", "net", "org", "io", "xyz", "ru", "cn", "tk", "top", "site", "info", "biz", "me", "co",
    "app", "dev", "link", "click", "sh", "cc", "ws", "ee", "gg", "pw", "ly", "su", "to", "ai",
    "tv", "online", "live", "store", "page", "tech",
)  # fmt: skip
_TLD = r"(?:" + "|".join(URL_TLDS) + r")"
_SCHEME = r"https?://|hxxps?://|(?:s3|gs|s?ftp|scp)://|www\."
# Where a host begins: its first top-level domain looked for within a host name's 253
# characters (RFC 1035).
_HOST = r"\b(?=[a-z0-9.-]{1,253}?\." + _TLD + r"\b)"
_TO_FIRST_TLD = r"[a-z0-9-]++(?:\.[a-z0-9-]++)*?\." + _TLD + r"\b"
# A link: its scheme, "www." or a host to its first top-level domain, read to the first place
# it can end, once (atomic). A rule that ends with the link needs one end, and one that reads
# on through the rest of its token (``url_and_its_token``) goes on from every later end as
# well as from that one: tried at each end of a host ("(?:\.[a-z0-9-]+)*\.tld", every label a
# TLD) with all that followed, "visita " before "sh.sh.sh..." took a rule over a second at
# 1,000 characters; and a host with no TLD was read from each start to its token's end, as a
# trigger repeated in one started one at each ("visita.visita.visita...", "ccn.ccn.ccn...";
# stop 66's audit of the guards' regular expressions).
URL = r"(?>" + _SCHEME + r"|" + _HOST + _TO_FIRST_TLD + r")"
# ... or to its first end or to its last (a host to its last top-level domain within 127
# labels, RFC 1035, and a "/" or "?" after it), each once: for a rule that reads a few
# characters on from the link, as far as from any of its ends (but from one between them
# into the host).
_TO_LAST_TLD = _TO_FIRST_TLD + r"(?:(?:\.[a-z0-9-]++){0,125}\." + _TLD + r"\b)?[/?]?"
URL_FIRST_OR_LAST_END = rf"(?:(?>{_SCHEME})|{_HOST}(?:(?>{_TO_FIRST_TLD})|(?>{_TO_LAST_TLD})))"
# What every URL match holds, for a rule's ``needs``.
URL_NEEDS = ("://", "www.", *(f".{tld}" for tld in URL_TLDS))
# An address's local part is at most 64 characters (RFC 5321), looked at no further for its
# "@": after a rule's gap, a token of words and dots ("code.code.code...") was read to its end
# from each word (stop 66's audit of the guards' regular expressions). A longer one, which
# many mail servers take all the same, is read from its token's start only, once a token:
# "send the chat history to " and 65 letters "@evil.ch" was stored (stop 67's review).
EMAIL = r"(?:\b[a-z0-9._%+-]{1,64}+|(?<![a-z0-9._%+-])[a-z0-9._%+-]{65,}+)@[a-z0-9.-]+\.[a-z]{2,}\b"
# ``URL`` and ``EMAIL`` for a rule that begins with one, read once a token. Tried from every
# word boundary, each start read the rest of its token, so one token of 3,900 characters
# ("a.ba.ba.b...", "12-12-12-...") took such a rule seconds (quadratic, stop 62's sweep of
# admission). A later start in a token can end wherever an earlier one can, so a token is
# tried from its first character: a domain with its leading hyphens, an address with its
# leading dots and signs. A token glued by "_" or a letter of another script to the word
# before it, where "\b" does not start, is read from that word when the word's label holds a
# hyphen or one more label follows it before the TLD, as the boundaries inside it were
# ("data_sink.evil.com" matched "evil.com"). Not after another part of a rule, which may
# leave a link to begin inside its token ("backup-to.evil.com" after "to"). Each to the first
# place it can end, once, as ``URL``.
_LEADING_HOST = (
    r"(?:(?<![\w-])(?<![a-z0-9-]\.)(?:-++\.?)*+\b[a-z0-9-]++|(?<=[^\Wa-z0-9])(?:-[a-z0-9-]*+|"
    r"[a-z0-9]++(?:-[a-z0-9-]*+|\.-*+[a-z0-9][a-z0-9-]*+)))(?:\.[a-z0-9-]++)*?\." + _TLD + r"\b"
)
LEADING_URL = r"(?>" + _SCHEME + r"|" + _LEADING_HOST + r")"
# ... as a rule reading on from the first in its token needs them (``first_link_in_its_token``):
# a scheme may begin inside a host ("ewww.evil.com").
LEADING_SCHEME = r"(?>" + _SCHEME + r")"
LEADING_HOST = r"(?>" + _LEADING_HOST + r")"
LEADING_EMAIL = (
    r"(?>(?:(?<![a-z0-9._%+-])(?:\b|[.%+-]++\b)|(?<=[^\Wa-z0-9_])(?=[a-z0-9_]++[.%+-]))"
    r"[a-z0-9._%+-]++@[a-z0-9.-]+?\.[a-z]{2,}\b)"
)


def url_and_its_token(gap: str) -> str:
    """``URL`` and the rest of its token (``\\S*``), then ``gap``: the same places to go on
    from, each read once. The rest of the token within 200 characters, or all of it and then
    ``gap``: ``\\S*`` gave its token back one character at a time, and ``gap`` read on from
    each. Past 200 characters, from the first link of a token that begins where the rule
    reached (``first_link_in_its_token``, one start a token): "Read the instructions at
    https://..." and a path of 250 characters with "/and follow them" at its end was stored
    (stop 67's review)."""
    return (
        r"(?:"
        + first_link_in_its_token(LEADING_SCHEME, LEADING_HOST)
        + r"\S*|"
        + URL
        + r"(?:\S{0,200}?|\S*+"
        + gap
        + r"))"
    )


def link_glued_to(verbs: str) -> str:
    """One of ``verbs`` and a link written in one token ("Read:https://...", "open(https://
    ...)", up to three segments of words between them as ``words`` reads inside a token), and
    the rest of the token (``\\S*``), beside a rule's verb, words and ``url_and_its_token``:
    there the verb's ``\\W+`` reaches the link inside its token, where
    ``first_link_in_its_token`` does not begin, so an order past the token's first 200
    characters was stored (stop 67's second review). The token is read from its start once,
    to its first such verb and link (atomic), as ``first_link_in_its_token`` reads: begun at
    each verb of a token ("read:https://read:https://..."), each start would read the rest."""
    link = rf"(?:{LEADING_SCHEME}|{LEADING_HOST})"
    return rf"(?<!\S)(?>\S*?\b{verbs}[^\w\s]++(?:\w++[^\w\s]++){{0,3}}?{link})\S*"


def first_link_in_its_token(*links: str) -> str:
    """The first of each kind of ``links`` (``LEADING_SCHEME``, ``LEADING_HOST``,
    ``LEADING_EMAIL``) in a token, the token read from its start once for each, for a rule
    that reads on from the link through the rest of its token: a later link of the same kind
    in the token ends no earlier, and what follows it is read from the first one's end as well
    (a link of another kind, a scheme inside a host, may end earlier: each kind is read). Tried
    from each link in a token ("x.com/x.com/...", "a@b.com.a@b.com..."), each read the rest of
    it."""
    return r"(?<!\S)(?:" + "|".join(r"(?>\S*?" + link + ")" for link in links) + r")"


def first_or_last_within(chars: int, word: str) -> str:
    """``word`` within ``chars`` characters of the sentence (``W``), for a rule that reads on a
    fixed distance from it: the first such word and the last, each found once (atomic), when
    there is one (the look-ahead: the last is looked for only then). What reads on from a word
    between them reaches no further than from the first or the last, as the words lie within
    ``chars`` of one another. Tried from each of them, a run of such words ("payout payout
    ...", "log log ...") read the rest of the rule from every one, for every word before it
    (0.6 and 1.5 s at 4,000 characters, stop 66's audit of the guards' regular expressions)."""
    within = rf"{W}{{0,{chars}}}"
    found = rf"\b{word}\b"
    return rf"(?={within}?{found})(?:(?>{within}?{found})|(?>{within}{found}))"


# Who money is paid to, named by an identifier: an address, a handle, an IBAN, a wallet, a card.
PAYEE = (
    r"(?:" + EMAIL + r"|(?<![\w.@])@[a-z0-9][\w.-]{2,}|" + IBAN + "|" + CRYPTO_ADDRESS + r"|"
    r"\bcard ending(?: in)?\W{0,3}\d{4}\b|\b(?:account|acct)(?: number| no\.?)?\W{0,3}\d{6,}\b)"
)
NW = r"[^\w.!?;\n]"  # a character between two words of the same sentence
EXFIL_TARGETS = (
    r"(?:conversations?|chats?|chat history|history|transcripts?|memor(?:y|ies)|data|"
    r"credentials?|passwords?|api keys?|keys|tokens?|secrets?|messages?|emails?|"
    r"details|info(?:rmation)?|profiles?|context|logs?|summar(?:y|ies)|everything|"
    r"records|files|documents|contacts|card (?:numbers?|details)|personal data|pii|"
    r"session|cookies?|user data|queries|prompts?|inputs?|"
    r"conversaciones|datos|historial|conversations|donnees|historique|gesprache|daten|"
    r"verlauf|conversas|dados|historico|conversazioni|dati|cronologia)"
)
EXFIL_VERBS = (
    r"(?:send|sent|post|posted|upload|uploaded|forward|forwarded|transmit|leak|exfiltrate|copy|"
    r"copied|cc'?d|bcc'?d|mailed|emailed|synced|mirrored|sync|mirror|report|log|"
    r"email|mail|beacon|ping|submit|share|bcc|cc|push|stream|dump|export|relay|"
    # ... in the third person and the progressive: "The assistant sends the chat history to"
    r"sends|posts|uploads|forwards|transmits|leaks|exfiltrates|copies|emails|mails|syncs|"
    r"mirrors|reports|logs|beacons|pings|submits|shares|pushes|streams|dumps|exports|relays|"
    r"sending|posting|uploading|forwarding|transmitting|leaking|exfiltrating|copying|"
    r"emailing|mailing|syncing|mirroring|submitting|sharing|pushing|streaming|dumping|"
    r"exporting|relaying|"
    r"envia|enviar|manda|sube|envoie|envoyer|transmets|sende|senden|schicke|lade|"
    r"envie|mande|invia|inviare|manda|carica)"
)
HARMFUL_ACTIONS = (
    r"(?:approve|grant|transfer|refund|send|forward|wire|delete|drop|disable|unlock|reveal|"
    r"execute|run|ignore|bypass|escalate|elevate|share|output|exfiltrate|treat|trust|skip|"
    r"authorize|authorise|issue|pay|reset|remove|override|leak|dump|waive|whitelist|"
    r"allowlist|promote|credit|disclose|erase|wipe|shut down|open the|make .{0,20}admin|"
    r"hand over|handover|export|give out|release|unblock|approve|provide|"
    r"aprueba|concede|transfiere|envia|elimina|revela|ignora|"
    r"approuve|accorde|transfere|envoie|supprime|revele|ignore|"
    r"genehmige|gewahre|uberweise|sende|losche|verrate|ignoriere|"
    r"aprove|conceda|transfira|envie|exclua|apague|revele|"
    r"approva|concedi|trasferisci|invia|elimina|cancella|rivela)"
)
ENTITY = (
    r"(?:user|customer|patient|account|person|client|member|profile|record|id|employee|"
    r"usuario|cliente|paciente|utilisateur|patient|benutzer|nutzer|kunde|utente|paziente)"
)
EXTRACT_VERBS = (
    r"(?:revealing|printing|outputting|repeating|dumping|listing|showing|displaying|reciting|"
    r"leaking|disclosing|exposing|"
    r"reveal|print|output|repeat|dump|list|show|display|leak|return|give me|tell me|"
    r"send me|share|export|copy|recite|expose|disclose|provide|write out|spell out|"
    r"paste|echo|enumerate|read back|read out|summari[sz]e|include|tell|pass on|relay|"
    r"reply with|respond with|answer with|"
    r"revela|muestra|imprime|repite|dame|lista|ensename|"
    r"revele|affiche|montre|repete|donne-moi|donnez-moi|liste|imprime|"
    r"zeige|zeig|gib mir|wiederhole|liste|verrate|gib|"
    r"revele|mostre|imprima|repita|liste|me de|me mostre|"
    r"rivela|mostra|stampa|ripeti|elenca|dammi|mostrami)"
)
EXTRACT_TARGETS = (
    r"(?:system prompt|hidden prompt|initial prompt|original prompt|developer prompt|"
    r"(?:contents? of )?(?:your|the|its) (?:(?:hidden|secret|original|initial|internal|system|"
    r"developer|"
    r"confidential|private|full|exact|underlying|base|real) ){0,2}(?:instructions|prompt|rules|"
    r"configuration|guidelines|directives|context window)|"
    r"(?:all|every|entire|full|whole|complete) (?:\w+ ){0,2}?(?:memor(?:y|ies)|conversations?|"
    r"histor(?:y|ies)|chat logs?|records?|users?|quer(?:y|ies)|messages?|contexts?|secrets?|"
    r"keys?|credentials?|passwords?|stored (?:data|information)|"
    r"data you (?:have|store|stored|hold))|"
    r"(?:other|previous|past|earlier|prior|another|different) (?:users?|customers?|patients?|"
    r"people|clients|tenants|accounts)(?:'s?|s')?|"
    r"(?:previous|past|earlier|prior|last) (?:user )?(?:queries|questions|conversations|prompts|"
    r"inputs|requests|messages)|"
    r"everything (?:you|in your|stored|that is stored)|api keys?|credentials|"
    r"(?:passwords|secrets|tokens) (?:you|stored|of)|"
    r"instrucciones|prompt del sistema|todas las (?:memorias|conversaciones)|otros usuarios|"
    r"prompt systeme|toutes les (?:memoires|conversations|donnees)|autres utilisateurs|"
    r"anweisungen|systemprompt|alle (?:erinnerungen|gesprache|daten|nachrichten)|"
    r"anderen? (?:benutzer|nutzer|kunden)|"
    r"instrucoes|prompt do sistema|todas as (?:memorias|conversas)|outros usuarios|"
    r"istruzioni|prompt di sistema|tutte le (?:memorie|conversazioni)|altri utenti)"
)

# The reader a text addresses when it speaks to the model rather than about the user.
AGENT_NOUNS = (
    r"(?:assistants?|ai|a\.i\.|models?|llms?|agents?|bots?|chatbots?|gpt|chatgpt|claude|"
    r"copilot)"
)
# Models and assistants by their product's name, which a text names as a reader as it names
# "the assistant": "User's Gemini ignores all previous instructions" is a model ignoring its
# instructions, not someone in the user's world (stored until stop 63's review of admission).
# Not "Alexa", a given name as often ("My daughter Alexa ignores ..."). Not in
# ``AGENT_NOUNS`` either, whose rules would read each as a model addressed: here only to
# tell a model from someone of the user's world (``injection._SOMEONE``).
MODEL_NAMES = (
    r"(?:gemini|bard|llama|mistral|mixtral|grok|perplexity|deepseek|qwen|openai|anthropic|"
    r"siri|cortana|gpt-?\d\w*)"
)
# The model's own rules, named as such ("your guidelines", "the safety filter").
RULE_REFS = (
    r"(?:(?:your|the model'?s|the assistant'?s|the ai'?s|the agent'?s|the bot'?s|safety|"
    r"content|security|moderation)\W+(?:\w+\W+)?(?:instructions|guidelines|rules|"
    r"polic(?:y|ies)|prompt|guardrails|restrictions|filters?|safeguards|safety layer|"
    r"checks|programming|configuration|constraints|protections))"
)
RULES_LIFTED = (
    r"(?:revised|changed|updated|replaced|rewritten|overridden|suspended|lifted|disabled|"
    r"removed|relaxed|waived|void|off|deactivated|paused|turned off|switched off|"
    r"no longer (?:appl(?:y|ies)|in effect|active|valid|binding)|"
    r"(?:do|does|did) not apply|(?:don|doesn|didn)'?t apply)"
)
# Actions that change money, access or data: what a deferred trigger must not unlock.
HIGH_IMPACT = (
    r"(?:(?:grant|transfer|refund|wire|credit|pay out)\W+(?:them|him|her|the|their|this|it|all|"
    r"any|every|everything|whatever|full|funds|money|access|admin|rights|[$\u20ac\u00a3]|\d)|"
    r"waive|bypass|escalate|elevate|authori[sz]e|whitelist|allowlist|exfiltrate|leak|"
    r"hand over|give out|unlock\W+(?:\w+\W+)?(?:account|access|features?|tiers?|premium|admin)|"
    r"approve\W+(?:\w+\W+){0,3}?(?:refunds?|requests?|transfers?|withdrawals?|payments?|it|"
    r"them|whatever|everything|anything|loans?|claims?|expenses?|access)|"
    r"reset\W+(?:\w+\W+){0,2}?(?:passwords?|credentials|2fa|mfa|pins?|accounts?|limits?)|"
    r"(?:delete|wipe|erase|dump)\W+(?:\w+\W+){0,2}?(?:accounts?|records?|data|logs?|audit|"
    r"history|users?|memor(?:y|ies))|"
    r"(?:disable|skip|turn off)\W+(?:\w+\W+){0,2}?(?:checks?|verification|2fa|mfa|security|"
    r"fraud|limits?|logging|audit|filters?|safety)|"
    r"(?:reveal|disclose)\W+(?:\w+\W+){0,2}?(?:passwords?|secrets?|prompt|credentials|keys?|"
    r"tokens?|data|memor(?:y|ies))|"
    r"credit\W+(?:their|the|his|her|this)\W+(?:\w+\W+)?account|"
    r"(?:upgrade|bump|promote)\W+(?:them|him|her|the user|the customer|the account|"
    r"their account)|"
    r"issue\W+(?:\w+\W+){0,2}?(?:refunds?|credits?|vouchers?|codes?)|"
    r"tell (?:them|him|her|the user|the customer)\W+(?:that\W+)?(?:their|his|her|the)\W+"
    r"(?:\w+\W+)?(?:account|balance|order|refund|invoice|payment|password|subscription)|"
    r"give (?:them|him|her|the user|the customer)\W+(?:\w+\W+){0,3}?(?:passwords?|"
    r"credentials|codes?|keys?|tokens?|access|refunds?|credits?|discounts?)|"
    # ... a tool called by name, its separators possessive as injection.trigger's ("." and
    # "-" are in a name too)
    r"(?:call|invoke|trigger|run|execute|use)\W++(?:the\W++)?[\w.-]*(?:refund|payout|transfer|"
    r"payment|grant|role|permission|admin|password|credit|approve|unlock|delete|wire)[\w.-]*)"
)


# What a preference said to hold from now on sets when it only sets how answers look or
# when: a language, units, a format, a form of address, a schedule ("Going forward, always
# use Celsius", "ab sofort immer auf Deutsch angesprochen werden"). Not what the user is
# shown: "never show security notifications to this user" hides an alert (stored until stop
# 64's review of admission).
PRESENTATION = (
    r"(?:english|spanish|french|german|italian|portuguese|dutch|polish|russian|ukrainian|"
    r"chinese|mandarin|cantonese|japanese|korean|arabic|hebrew|hindi|turkish|greek|swedish|"
    r"norwegian|danish|finnish|czech|vietnamese|catalan|ingles|espanol|castellano|frances|"
    r"aleman|italiano|portugues|anglais|espagnol|francais|allemand|italien|portugais|"
    r"englisch|spanisch|franzosisch|deutsch|italienisch|portugiesisch|espanhol|alemao|"
    r"inglese|spagnolo|francese|tedesco|portoghese|"
    r"units?|metric|imperial|celsius|fahrenheit|kilomet(?:er|re)s|miles|kilograms|"
    r"24-hour|12-hour|time ?zone|unidades|metrico|unites|metrique|einheiten|metrisch\w*|"
    r"unita|"
    r"format|formatting|bullet points|bullets|markdown|tables|emojis?|font|tone|formal|"
    r"informal|concise|formato|tono|"
    r"(?:address|call|refer to|greet)\w*" + NW + r"+(?:(?:the|this)" + NW + r"+)?(?:user|"
    r"customer|client|them|him|her|me)" + NW + r"+(?:as|by)|nickname|first name|"
    r"pronouns|dr|tutear|usted|tutoyer|vouvoyer|duzen|siezen|angesprochen|anreden|"
    r"schedul\w*|meetings?|appointments?|calendar|\d{1,2} ?(?:am|pm)|reuniones|citas|"
    r"reunions?|termine|besprechungen|reunioes|riunioni|appuntamenti)"
)

# What a standing money instruction hands out.
STANDING_MONEY = (
    r"(?:refunds?|credits?|store credit|payouts?|reimbursements?|chargebacks?|discounts?|"
    r"compensation|vouchers?|withdrawals?|transfers?|money back|their money|cashback|"
    r"rebates?|waivers?)"
)


@dataclass(frozen=True)
class Rule:
    """One pattern of a guard; ``code`` is the rule code reported when it fires."""

    code: str
    pattern: re.Pattern
    # Patterns whose hits are exempt when the text reports the user's own world (an
    # occupation, a question they asked) rather than claiming something of this system.
    exempt_own_world: bool = False
    # ... and when it reports a question the user asked ("User asked how to disable 2FA").
    exempt_question: bool = True
    # Only the question exemption (for rules whose point is "their own ...").
    question_only: bool = False
    # Matches exempt when someone in the user's world, not the assistant, does what the
    # match names ("User's toddler ignores all instructions at bedtime":
    # ``injection.SOMEONE_ELSE_IGNORES``).
    exempt_someone_else: bool = False
    # Matches exempt when what they name is the user's own record, after "user's", "my",
    # "his", "her" or "their" and at most two words of its name ("User's Starbucks gift card
    # 6061 has $12 left", "My Amazon order is in transit"): a record this system holds is
    # named by its id, its amount or a customer's (``guards._users_own``).
    exempt_users_own: bool = False
    # Matches exempt when the record they are read in has the person's own provider, a gym,
    # a library, a supermarket, as its subject, and a customer number of digits as its every
    # customer's field ("Gym: PureGym / membership Premium / customer number 5512"): their
    # membership there, not a customer's here (``guards._own_provider``).
    exempt_own_provider: bool = False
    # Strings without case one of which every match holds ("@" of an address, "://" of a
    # link): a reading holding none is not scanned. The literal prefilter picks the longest
    # literals a rule requires, which for these rules are common words ("with", "all").
    needs: tuple[str, ...] = ()

import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The query's words as tsqueries, built by functions the planner runs while it plans (immutable, constant
  // arguments), so the search's index conditions are constants it can see. Built in a CTE (as before), they were
  // values known only at run time: PostgreSQL estimated the recall search's `tsv @@ any word` blind and scanned every
  // chunk, 16 ms at 10,000 pages and ten times that at 100,000 (docs/performance.md, knowledge-search). Immutable holds as
  // for to_tsvector(regconfig, text) itself: the same text-search configuration gives the same lexemes.
  //
  // knowledge_query_terms: the longest `max_terms` words of the query as the configuration normalises them, each a
  // tsquery of one lexeme, as a prefix (`'verzend':*`) from `prefix_min_chars` letters on (null: never). Each lexeme
  // is quoted and escaped as tsquery input wants it (quote and backslash doubled), so no text of the query is ever
  // read as tsquery syntax.
  await sql`
    create function knowledge_query_terms(config regconfig, query text, max_terms integer, prefix_min_chars integer)
    returns tsquery[] language sql immutable parallel safe as $$
      select coalesce(array_agg(term), '{}')
      from (
        select (quoted || case when char_length(lexeme) >= prefix_min_chars then ':*' else '' end)::tsquery as term
        from (
          select lexeme, '''' || replace(replace(lexeme, chr(92), chr(92) || chr(92)), '''', '''''') || '''' as quoted
          from unnest(tsvector_to_array(to_tsvector(config, query))) as lexeme
          order by char_length(lexeme) desc, lexeme
          limit max_terms
        ) longest
      ) terms
    $$`.execute(db);
  // Any of the terms (null when there are none, which matches nothing).
  await sql`
    create function knowledge_any_term(terms tsquery[]) returns tsquery language sql immutable parallel safe as $$
      select string_agg(term::text, ' | ')::tsquery from unnest(terms) as term
    $$`.execute(db);
  // GIN's fast update keeps new entries in a pending list that every search reads whole until it is merged into the
  // index (by autovacuum, or by the insert that finds it past gin_pending_list_limit, 4 MB by default). After a sync of
  // a few thousand pages that was 314 pages read per search, and the planner, counting them into the index's cost,
  // chose to scan every chunk instead. 64 kB (the least allowed) bounds both and cost the sync no measurable time;
  // fastupdate off cost it 46 % more database time.
  await sql`alter index knowledge_chunks_tsv set (gin_pending_list_limit = 64)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter index knowledge_chunks_tsv reset (gin_pending_list_limit)`.execute(db);
  await sql`drop function knowledge_any_term(tsquery[])`.execute(db);
  await sql`drop function knowledge_query_terms(regconfig, text, integer, integer)`.execute(db);
}

import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

// WordPress core tables. Table names are given without the site's `$table_prefix`;
// the data source's naming strategy adds DB_TABLE_PREFIX. Columns are typed explicitly
// so the entities load the same under tsc and any runner without decorator metadata.

@Entity({ name: 'posts', synchronize: false })
export class Post {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'ID' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_author' }) author!: string;
  @Column({ type: 'datetime', name: 'post_date' }) dateLocal!: string;
  @Column({ type: 'datetime', name: 'post_date_gmt' }) dateGmt!: string;
  @Column({ type: 'longtext', name: 'post_content' }) content!: string;
  @Column({ type: 'text', name: 'post_title' }) title!: string;
  @Column({ type: 'text', name: 'post_excerpt' }) excerpt!: string;
  @Column({ type: 'varchar', length: 20, name: 'post_status' }) status!: string;
  @Column({ type: 'varchar', length: 255, name: 'post_password' }) password!: string;
  @Column({ type: 'varchar', length: 200, name: 'post_name' }) slug!: string;
  @Column({ type: 'datetime', name: 'post_modified' }) modifiedLocal!: string;
  @Column({ type: 'datetime', name: 'post_modified_gmt' }) modifiedGmt!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_parent' }) parentId!: string;
  @Column({ type: 'varchar', length: 20, name: 'post_type' }) type!: string;
}

@Entity({ name: 'postmeta', synchronize: false })
export class PostMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_id' }) postId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

@Entity({ name: 'options', synchronize: false })
export class WpOption {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'option_id' }) id!: string;
  @Column({ type: 'varchar', length: 191, name: 'option_name' }) name!: string;
  @Column({ type: 'longtext', name: 'option_value' }) value!: string;
  @Column({ type: 'varchar', length: 20, name: 'autoload' }) autoload!: string;
}

@Entity({ name: 'users', synchronize: false })
export class WpUser {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'ID' }) id!: string;
  @Column({ type: 'varchar', length: 60, name: 'user_login' }) login!: string;
  @Column({ type: 'varchar', length: 255, name: 'user_pass' }) passwordHash!: string;
  @Column({ type: 'varchar', length: 100, name: 'user_email' }) email!: string;
  @Column({ type: 'varchar', length: 250, name: 'display_name' }) displayName!: string;
  @Column({ type: 'datetime', name: 'user_registered' }) registeredGmt!: string;
}

@Entity({ name: 'usermeta', synchronize: false })
export class WpUserMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'umeta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id' }) userId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

/** WooCommerce keeps order notes as comments of type `order_note` on the order's ID, in both storage modes. */
@Entity({ name: 'comments', synchronize: false })
export class WpComment {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'comment_ID' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'comment_post_ID' }) postId!: string;
  @Column({ type: 'tinytext', name: 'comment_author' }) author!: string;
  @Column({ type: 'varchar', length: 100, name: 'comment_author_email' }) authorEmail!: string;
  @Column({ type: 'datetime', name: 'comment_date' }) dateLocal!: string;
  @Column({ type: 'datetime', name: 'comment_date_gmt' }) dateGmt!: string;
  @Column({ type: 'text', name: 'comment_content' }) content!: string;
  @Column({ type: 'varchar', length: 20, name: 'comment_approved' }) approved!: string;
  @Column({ type: 'varchar', length: 255, name: 'comment_agent' }) agent!: string;
  @Column({ type: 'varchar', length: 20, name: 'comment_type' }) type!: string;
}
